//! Passwords out of what the plugin prints: a URL's `user:password@` becomes `user:***@`.

/// `text` with the password of every `scheme://user:password@host` replaced.
pub fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        // The authority ends at the first '/', whitespace or quote; its last '@' ends the userinfo.
        let end = tail
            .find(|c: char| c == '/' || c.is_whitespace() || c == '"' || c == '\'')
            .unwrap_or(tail.len());
        let authority = &tail[..end];
        match authority.rfind('@').and_then(|at| {
            let colon = authority[..at].find(':')?;
            Some((colon, at))
        }) {
            Some((colon, at)) => {
                out.push_str(&authority[..=colon]);
                out.push_str("***");
                out.push_str(&authority[at..]);
            }
            None => out.push_str(authority),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn a_password_in_a_url_is_redacted_and_nothing_else() {
        assert_eq!(
            redact("url: mysql://writer:s3cret@db:3306/serving, s3://bucket/x"),
            "url: mysql://writer:***@db:3306/serving, s3://bucket/x"
        );
        assert_eq!(redact("mysql://writer@db/x"), "mysql://writer@db/x");
        assert_eq!(redact("\"mysql://a:p@ss@h/d\""), "\"mysql://a:***@h/d\"");
        assert_eq!(redact("no url here"), "no url here");
    }
}

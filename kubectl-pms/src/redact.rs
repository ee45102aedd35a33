//! Secrets out of what the plugin prints: a URL's `user:password@` becomes `user:***@`, and the
//! value of every key named like a secret (`password: x`, `"password":"x"`, `MYSQL_PASSWORD='x'`,
//! `secretAccessKey=x`, `sessionToken: "x"`), whatever its quoting, becomes `***`.

/// `text` with URL passwords and secret-named values replaced.
pub fn redact(text: &str) -> String {
    secret_values(&url_passwords(text))
}

/// The password of every `scheme://user:password@host` replaced.
fn url_passwords(text: &str) -> String {
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

/// How a key that holds a secret ends (compared without case, `_` and `-`).
const SECRET_KEY_ENDINGS: [&str; 5] = ["password", "passwd", "secret", "secretaccesskey", "token"];

fn is_key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.'
}

fn names_a_secret(key: &str) -> bool {
    let key: String = key
        .chars()
        .filter(|c| *c != '_' && *c != '-')
        .collect::<String>()
        .to_ascii_lowercase();
    SECRET_KEY_ENDINGS.iter().any(|e| key.ends_with(e))
}

/// Every `key<quote?><spaces?>(:|=)<spaces?>value` whose key names a secret, with the value (up
/// to its closing quote, or unquoted up to a space or delimiter) replaced. A value that opens a
/// map or list (`secret: {secretName: x}`) or is empty is a structure, not a secret, and stays.
fn secret_values(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        // A key: a run of key characters not preceded by one.
        if !is_key_char(chars[i]) || (i > 0 && is_key_char(chars[i - 1])) {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && is_key_char(chars[i]) {
            i += 1;
        }
        let key: String = chars[start..i].iter().collect();
        out.push_str(&key);
        if !names_a_secret(&key) {
            continue;
        }
        let mut j = i;
        if j < chars.len() && (chars[j] == '"' || chars[j] == '\'') {
            j += 1;
        }
        while j < chars.len() && chars[j] == ' ' {
            j += 1;
        }
        if j >= chars.len() || (chars[j] != ':' && chars[j] != '=') {
            continue;
        }
        j += 1;
        while j < chars.len() && chars[j] == ' ' {
            j += 1;
        }
        let Some(&first) = chars.get(j) else { continue };
        if matches!(first, '{' | '[' | '\n' | '\r') {
            continue;
        }
        // Up to the value: the key's closing quote, the separator, the spaces.
        out.extend(&chars[i..j]);
        let end = if first == '"' || first == '\'' {
            let mut k = j + 1;
            while k < chars.len() && chars[k] != first {
                k += if chars[k] == '\\' { 2 } else { 1 };
            }
            out.push(first);
            out.push_str("***");
            if k < chars.len() {
                out.push(first);
            }
            k + 1
        } else {
            let mut k = j;
            while k < chars.len()
                && !chars[k].is_whitespace()
                && !matches!(chars[k], ',' | '}' | ']' | ';' | '&' | '"' | '\'')
            {
                k += 1;
            }
            out.push_str("***");
            k
        };
        i = end.min(chars.len());
    }
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

    #[test]
    fn a_secret_named_value_is_redacted_whatever_its_quoting() {
        for (text, redacted) in [
            ("password: hunter2", "password: ***"),
            ("password: \"hun ter2\" next", "password: \"***\" next"),
            (
                "{\"password\":\"hunter2\",\"user\":\"u\"}",
                "{\"password\":\"***\",\"user\":\"u\"}",
            ),
            ("MYSQL_PASSWORD='x y' other", "MYSQL_PASSWORD='***' other"),
            (
                "AWS_SECRET_ACCESS_KEY=abc def",
                "AWS_SECRET_ACCESS_KEY=*** def",
            ),
            ("secretAccessKey: 'a\\'b'", "secretAccessKey: '***'"),
            ("sessionToken = tok;x", "sessionToken = ***;x"),
            ("password=\"unterminated", "password=\"***"),
        ] {
            assert_eq!(redact(text), redacted, "{text}");
        }
        // Structures and names that only mention a secret stay.
        for kept in [
            "secret:\n  secretName: mysql-writer",
            "secret: {secretName: s}",
            "credentialsSecretRef: {name: mysql-writer}",
            "secretName: mysql-writer",
            "the password was refused",
            "passwordless: true",
        ] {
            assert_eq!(redact(kept), kept);
        }
    }
}

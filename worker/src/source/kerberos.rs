//! `source.kerberos`: the worker logs in to a Kerberized HDFS from a keytab. The HDFS client
//! (hdfs-native) loads MIT's GSSAPI library, which reads `KRB5_CLIENT_KTNAME` (the keytab) and
//! `KRB5_CONFIG` (`krb5.conf`) itself and logs in as the keytab's first entry. What that library
//! would only report deep inside the first HDFS call (no keytab, another principal, a Hadoop
//! configuration that doesn't ask for Kerberos) is checked here, before anything is read.

use std::path::Path;

use pms_crds::contract::{ENV_KRB5_CLIENT_KTNAME, ENV_KRB5_CONFIG};
use pms_crds::KerberosSpec;

use super::hdfs;

/// The problem with `kerberos` for a warehouse at `uri`, if any.
pub(super) fn check(kerberos: &KerberosSpec, uri: &str) -> Result<(), String> {
    let principal = &kerberos.principal;
    if !uri.starts_with("hdfs://") {
        return Err(format!(
            "source.kerberos logs in to HDFS, but the warehouse {uri:?} is not on HDFS; remove it"
        ));
    }
    let keytab = std::env::var(ENV_KRB5_CLIENT_KTNAME).map_err(|_| {
        format!(
            "source.kerberos: {ENV_KRB5_CLIENT_KTNAME} names no keytab; set it to the keytab of {principal} \
             (under the operator: source.kerberos.keytabSecretRef)"
        )
    })?;
    let path = keytab.strip_prefix("FILE:").unwrap_or(&keytab);
    let bytes = std::fs::read(path)
        .map_err(|e| format!("source.kerberos: can't read the keytab {path} ({e})"))?;
    let first = first_principal(&bytes)
        .ok_or_else(|| format!("source.kerberos: {path} is not a keytab, or holds no key"))?;
    if first != *principal {
        return Err(format!(
            "source.kerberos: the keytab {path} logs in as {first} (its first entry), not {principal}; \
             use a keytab whose first entry is {principal}, or name {first}"
        ));
    }
    if let Ok(conf) = std::env::var(ENV_KRB5_CONFIG) {
        if !Path::new(&conf).is_file() {
            return Err(format!(
                "source.kerberos: {ENV_KRB5_CONFIG} names {conf}, which is not a file (krb5.conf: the realm and its KDCs)"
            ));
        }
    }
    let (file, authentication) = hdfs::core_site_property("hadoop.security.authentication")
        .map_err(|e| {
            format!(
                "source.kerberos is set, but the Hadoop configuration that would set \
                 hadoop.security.authentication to kerberos is missing: {e}"
            )
        })?;
    if authentication.as_deref() != Some("kerberos") {
        return Err(format!(
            "source.kerberos is set, but {} does not set hadoop.security.authentication to kerberos, so the \
             HDFS client would not log in; set it there (under the operator: the ConfigMap of source.hadoopConf)",
            file.display()
        ));
    }
    Ok(())
}

/// The first principal of an MIT keytab (format 0x0502: big-endian; each entry a 32-bit size,
/// negative for a hole of that many bytes, then the component count, the realm and the
/// components as 16-bit-length strings, then the key).
fn first_principal(keytab: &[u8]) -> Option<String> {
    let mut r = Reader(keytab);
    if r.take(2)? != [5, 2] {
        return None;
    }
    loop {
        let size = i32::from_be_bytes(r.take(4)?.try_into().ok()?);
        if size < 0 {
            r.take(size.unsigned_abs() as usize)?;
            continue;
        }
        let mut entry = Reader(r.take(size as usize)?);
        let components = u16::from_be_bytes(entry.take(2)?.try_into().ok()?);
        let realm = entry.string()?;
        let name = (0..components)
            .map(|_| entry.string())
            .collect::<Option<Vec<_>>>()?;
        return Some(format!("{}@{realm}", name.join("/")));
    }
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = (self.0.get(..n)?, self.0.get(n..)?);
        self.0 = rest;
        Some(head)
    }

    fn string(&mut self) -> Option<String> {
        let len = u16::from_be_bytes(self.take(2)?.try_into().ok()?);
        String::from_utf8(self.take(len as usize)?.to_vec()).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An entry as MIT's `ktutil` writes it.
    fn entry(realm: &str, components: &[&str]) -> Vec<u8> {
        let mut e = (components.len() as u16).to_be_bytes().to_vec();
        for s in std::iter::once(&realm).chain(components) {
            e.extend((s.len() as u16).to_be_bytes());
            e.extend(s.as_bytes());
        }
        e.extend(1u32.to_be_bytes()); // name type
        e.extend(0u32.to_be_bytes()); // timestamp
        e.push(1); // key version
        e.extend(18u16.to_be_bytes()); // aes256-cts-hmac-sha1-96
        e.extend(2u16.to_be_bytes());
        e.extend([0xab, 0xcd]);
        let mut out = (e.len() as i32).to_be_bytes().to_vec();
        out.extend(e);
        out
    }

    #[test]
    fn the_first_entry_of_a_keytab_is_its_principal_holes_skipped() {
        let mut keytab = vec![5, 2];
        keytab.extend((-3i32).to_be_bytes());
        keytab.extend([0, 0, 0]);
        keytab.extend(entry("EXAMPLE.COM", &["pms", "host.example.com"]));
        keytab.extend(entry("EXAMPLE.COM", &["other"]));
        assert_eq!(
            first_principal(&keytab).as_deref(),
            Some("pms/host.example.com@EXAMPLE.COM")
        );
        assert_eq!(
            first_principal(&[5, 1]),
            None,
            "the old native-order format"
        );
        assert_eq!(first_principal(&[5, 2]), None, "no entry");
        assert_eq!(first_principal(&keytab[..20]), None, "cut short");
    }
}

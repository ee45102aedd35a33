//! Warehouse locations as the `paimon` crate opens them. `hdfs:///path` names no namenode: as
//! in Hadoop, it is the default file system of the Hadoop configuration (`fs.defaultFS` in
//! `$HADOOP_CONF_DIR/core-site.xml`, else `$HADOOP_HOME/etc/hadoop/core-site.xml`).
//! `hdfs://NAMESERVICE/path` names an HA pair (or more) of namenodes: as in Hadoop, their
//! addresses are `dfs.namenode.rpc-address.NAMESERVICE.ID` for each ID of
//! `dfs.ha.namenodes.NAMESERVICE` in that configuration's `hdfs-site.xml`. The HDFS client
//! (hdfs-native) is given them as `hdfs://HOST:PORT,HOST:PORT` (it fails over between them) and
//! reads the rest of the configuration itself (Kerberos, data transfer protection, retries).

use std::path::PathBuf;

/// The URI the catalog opens for `warehouse`, and for a warehouse on an HA nameservice the
/// namenodes the HDFS client is to use (`hdfs.name-node`); an error says what to set.
pub(super) fn warehouse_uri(warehouse: &str) -> Result<(String, Option<String>), String> {
    let uri = with_default_fs(warehouse)?;
    let name_nodes = ha_name_nodes(&uri, conf_dir())?;
    Ok((uri, name_nodes))
}

/// `warehouse` with a local path as `file://` and `hdfs:///` completed by `fs.defaultFS`.
fn with_default_fs(warehouse: &str) -> Result<String, String> {
    if warehouse.starts_with('/') {
        return Ok(format!("file://{warehouse}"));
    }
    let Some(path) = warehouse.strip_prefix("hdfs:///") else {
        return Ok(warehouse.to_string());
    };
    let (file, default_fs) = default_fs()?;
    let default_fs = default_fs.ok_or_else(|| {
        format!(
            "warehouse {warehouse:?} names no namenode, and {} sets no fs.defaultFS: write it as \
             hdfs://NAMENODE:PORT/{path}, or set fs.defaultFS there",
            file.display()
        )
    })?;
    if !default_fs.starts_with("hdfs://") {
        return Err(format!(
            "warehouse {warehouse:?}: fs.defaultFS in {} is {default_fs:?}, not an hdfs:// namenode; write the \
             warehouse as hdfs://NAMENODE:PORT/{path}",
            file.display()
        ));
    }
    Ok(format!("{}/{path}", default_fs.trim_end_matches('/')))
}

/// For `hdfs://NAMESERVICE/…` (no port), the namenodes of NAMESERVICE in `hdfs-site.xml` of the
/// Hadoop configuration directory `conf`, as `hdfs://HOST:PORT,HOST:PORT`; `None` for a namenode
/// given by its address, or a URI not on HDFS.
fn ha_name_nodes(uri: &str, conf: Option<PathBuf>) -> Result<Option<String>, String> {
    let Some(rest) = uri.strip_prefix("hdfs://") else {
        return Ok(None);
    };
    let authority = rest.split('/').next().unwrap_or_default();
    if authority.contains(':') {
        return Ok(None);
    }
    let not_found = |why: String| {
        format!(
            "warehouse {uri:?}: {authority:?} has no port, so it must be an HA nameservice of the Hadoop \
             configuration, but {why}; set HADOOP_CONF_DIR to a directory whose hdfs-site.xml names its \
             namenodes (dfs.ha.namenodes.{authority}, dfs.namenode.rpc-address.{authority}.ID), or write \
             the warehouse as hdfs://NAMENODE:PORT/path"
        )
    };
    let file = conf
        .ok_or_else(|| not_found("neither HADOOP_CONF_DIR nor HADOOP_HOME is set".into()))?
        .join("hdfs-site.xml");
    let xml = std::fs::read_to_string(&file)
        .map_err(|e| not_found(format!("{} can't be read ({e})", file.display())))?;
    let ids = property(&xml, &format!("dfs.ha.namenodes.{authority}")).ok_or_else(|| {
        not_found(format!(
            "{} sets no dfs.ha.namenodes.{authority}",
            file.display()
        ))
    })?;
    let addresses = ids
        .split(',')
        .map(str::trim)
        .filter(|id| !id.is_empty())
        .map(|id| {
            let key = format!("dfs.namenode.rpc-address.{authority}.{id}");
            property(&xml, &key)
                .ok_or_else(|| not_found(format!("{} sets no {key}", file.display())))
        })
        .collect::<Result<Vec<_>, _>>()?;
    if addresses.is_empty() {
        return Err(not_found(format!(
            "dfs.ha.namenodes.{authority} in {} is empty",
            file.display()
        )));
    }
    Ok(Some(format!("hdfs://{}", addresses.join(","))))
}

/// The Hadoop configuration directory: `$HADOOP_CONF_DIR`, else `$HADOOP_HOME/etc/hadoop`.
fn conf_dir() -> Option<PathBuf> {
    std::env::var_os("HADOOP_CONF_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HADOOP_HOME").map(|h| PathBuf::from(h).join("etc/hadoop")))
}

/// The Hadoop configuration's `core-site.xml` and the `fs.defaultFS` it sets, if any.
fn default_fs() -> Result<(PathBuf, Option<String>), String> {
    core_site_property("fs.defaultFS").map_err(|e| {
        format!("an hdfs:/// warehouse takes its namenode from the Hadoop configuration: {e}, or write the warehouse as hdfs://NAMENODE:PORT/path")
    })
}

/// The Hadoop configuration's `core-site.xml` and the value it sets for `name`, if any; an
/// error when there is no such file.
pub(super) fn core_site_property(name: &str) -> Result<(PathBuf, Option<String>), String> {
    let file = conf_dir()
        .ok_or("set HADOOP_CONF_DIR (a directory with core-site.xml)")?
        .join("core-site.xml");
    let xml = std::fs::read_to_string(&file)
        .map_err(|e| format!("can't read {} ({e})", file.display()))?;
    Ok((file, property(&xml, name)))
}

/// The value of property `name` in a Hadoop configuration file.
fn property(xml: &str, name: &str) -> Option<String> {
    xml.split("<property>").skip(1).find_map(|p| {
        let field = |tag: &str| {
            let start = p.find(&format!("<{tag}>"))? + tag.len() + 2;
            let end = start + p[start..].find(&format!("</{tag}>"))?;
            Some(p[start..end].trim().to_string())
        };
        (field("name")? == name).then(|| field("value")).flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_property_is_found_by_name() {
        let xml = "<configuration>\n<property><name>a</name><value>1</value></property>\n\
                   <property>\n  <name>fs.defaultFS</name>\n  <value> hdfs://nn:8020 </value>\n</property>\n</configuration>";
        assert_eq!(
            property(xml, "fs.defaultFS").as_deref(),
            Some("hdfs://nn:8020")
        );
        assert_eq!(property(xml, "a").as_deref(), Some("1"));
        assert_eq!(property(xml, "b"), None);
    }

    #[test]
    fn local_and_full_uris_are_kept() {
        assert_eq!(with_default_fs("/wh").unwrap(), "file:///wh");
        assert_eq!(
            with_default_fs("hdfs://nn:8020/wh").unwrap(),
            "hdfs://nn:8020/wh"
        );
        assert_eq!(with_default_fs("s3://b/wh").unwrap(), "s3://b/wh");
        for uri in ["file:///wh", "hdfs://nn:8020/wh", "s3://b/wh"] {
            assert_eq!(ha_name_nodes(uri, None), Ok(None), "{uri}");
        }
    }

    #[test]
    fn a_nameservice_is_its_namenodes_from_hdfs_site_or_an_error_naming_what_is_missing() {
        let conf = tempfile::tempdir().unwrap();
        let dir = || Some(conf.path().to_path_buf());
        let err = ha_name_nodes("hdfs://ns1/wh", None).unwrap_err();
        assert!(
            err.contains("HADOOP_CONF_DIR") && err.contains("dfs.ha.namenodes.ns1"),
            "{err}"
        );
        let err = ha_name_nodes("hdfs://ns1/wh", dir()).unwrap_err();
        assert!(err.contains("hdfs-site.xml can't be read"), "{err}");
        let site = |props: &str| {
            std::fs::write(
                conf.path().join("hdfs-site.xml"),
                format!("<configuration>{props}</configuration>"),
            )
            .unwrap()
        };
        let prop =
            |k: &str, v: &str| format!("<property><name>{k}</name><value>{v}</value></property>");
        site(&prop("dfs.nameservices", "other"));
        let err = ha_name_nodes("hdfs://ns1/wh", dir()).unwrap_err();
        assert!(err.contains("sets no dfs.ha.namenodes.ns1"), "{err}");
        site(
            &(prop("dfs.ha.namenodes.ns1", "a, b")
                + &prop("dfs.namenode.rpc-address.ns1.a", "h1:8020")),
        );
        let err = ha_name_nodes("hdfs://ns1/wh", dir()).unwrap_err();
        assert!(
            err.contains("sets no dfs.namenode.rpc-address.ns1.b"),
            "{err}"
        );
        site(
            &(prop("dfs.ha.namenodes.ns1", "a, b")
                + &prop("dfs.namenode.rpc-address.ns1.a", "h1:8020")
                + &prop("dfs.namenode.rpc-address.ns1.b", "h2:8021")),
        );
        assert_eq!(
            ha_name_nodes("hdfs://ns1/wh", dir()),
            Ok(Some("hdfs://h1:8020,h2:8021".to_string()))
        );
    }
}

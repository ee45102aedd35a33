//! Warehouse locations as the `paimon` crate opens them. `hdfs:///path` names no namenode: as
//! in Hadoop, it is the default file system of the Hadoop configuration (`fs.defaultFS` in
//! `$HADOOP_CONF_DIR/core-site.xml`, else `$HADOOP_HOME/etc/hadoop/core-site.xml`). The HDFS
//! client (hdfs-native) reads the rest of that configuration itself.

use std::path::PathBuf;

/// The URI the catalog opens for `warehouse`; an error says what to set.
pub(super) fn warehouse_uri(warehouse: &str) -> Result<String, String> {
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

/// The Hadoop configuration's `core-site.xml` and the `fs.defaultFS` it sets, if any.
fn default_fs() -> Result<(PathBuf, Option<String>), String> {
    let file = std::env::var_os("HADOOP_CONF_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HADOOP_HOME").map(|h| PathBuf::from(h).join("etc/hadoop")))
        .ok_or("an hdfs:/// warehouse takes its namenode from the Hadoop configuration: set HADOOP_CONF_DIR \
                (a directory with core-site.xml), or write the warehouse as hdfs://NAMENODE:PORT/path")?
        .join("core-site.xml");
    let xml = std::fs::read_to_string(&file).map_err(|e| {
        format!(
            "can't read {} ({e}), which an hdfs:/// warehouse takes its namenode from",
            file.display()
        )
    })?;
    Ok((file, property(&xml, "fs.defaultFS")))
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
        assert_eq!(warehouse_uri("/wh").unwrap(), "file:///wh");
        assert_eq!(
            warehouse_uri("hdfs://nn:8020/wh").unwrap(),
            "hdfs://nn:8020/wh"
        );
        assert_eq!(warehouse_uri("s3://b/wh").unwrap(), "s3://b/wh");
    }
}

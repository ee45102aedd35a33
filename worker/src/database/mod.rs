//! A whole Paimon database in one config: a `PaimonMysqlDatabaseSync` (or its bare spec, with
//! `tables` and `template`). Each matching table is an ordinary single-table sync, rendered
//! from the template ([`PaimonMysqlDatabaseSyncSpec::render`]); standalone, one process runs
//! them all ([`runner`]); under the operator, [`listing`] publishes the database's tables and
//! the operator stamps out one `PaimonMysqlSync` per table.

pub mod listing;
pub mod pool;
pub mod runner;

use std::path::{Path, PathBuf};

use pms_crds::contract::Slot;
use pms_crds::{
    table_sync_name, CompiledSelector, PaimonMysqlDatabaseSyncSpec, PaimonMysqlSyncSpec,
};

use crate::config::{resource_or_spec, WorkerConfig};
use crate::error::{Result, WorkerError};

/// A database sync's config, validated.
#[derive(Clone, Debug)]
pub struct DatabaseConfig {
    /// `metadata.name` of a whole resource: the tables' syncs are `<name>-<table>`; without
    /// it, `<database>.<table>` (as a single-table bare spec names its sync).
    pub name: Option<String>,
    pub spec: PaimonMysqlDatabaseSyncSpec,
    pub selector: CompiledSelector,
    base_dir: Option<PathBuf>,
}

impl DatabaseConfig {
    /// Whether a config file's text is a database sync (`kind: PaimonMysqlDatabaseSync`, or a
    /// spec with `template`), not a single-table one.
    pub fn is_database_sync(text: &str) -> bool {
        let Ok(value) = serde_yaml::from_str::<serde_yaml::Value>(text) else {
            return false;
        };
        let spec = value.get("spec").unwrap_or(&value);
        value.get("kind").and_then(|k| k.as_str()) == Some("PaimonMysqlDatabaseSync")
            || spec.get("template").is_some()
    }

    pub fn from_yaml(text: &str, base_dir: Option<&Path>) -> Result<Self> {
        let (name, spec): (_, PaimonMysqlDatabaseSyncSpec) = resource_or_spec(text)?;
        let selector = spec.validate().map_err(WorkerError::Config)?;
        Ok(Self {
            name,
            spec,
            selector,
            base_dir: base_dir.map(Path::to_path_buf),
        })
    }

    /// The sync name of `table`'s sync.
    pub fn sync_name(&self, table: &str) -> String {
        match &self.name {
            Some(name) => table_sync_name(name, table),
            None => format!("{}.{table}", self.spec.template.source.database),
        }
    }

    /// `table`'s spec: the template with the table's name, its override merged in.
    pub fn table_spec(&self, table: &str) -> Result<PaimonMysqlSyncSpec> {
        self.spec.render(table).map_err(WorkerError::Config)
    }

    /// `table`'s sync as slot `slot` runs it, credentials from `env`.
    pub fn table_config(
        &self,
        table: &str,
        slot: Slot,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<WorkerConfig> {
        WorkerConfig::resolve(
            self.table_spec(table)?,
            self.sync_name(table),
            slot,
            env,
            self.base_dir.as_deref(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "
apiVersion: paimonsync.io/v1alpha1
kind: PaimonMysqlDatabaseSync
metadata: {name: shop}
spec:
  tables: {names: [orders, customers]}
  template:
    source: {warehouse: /wh, database: shop, table: '{table}'}
    sink: {url: 'mysql://app@h:3306/serving', table: '{table}_rt'}
  overrides:
    orders: {sink: {maxRows: 5000}}
";

    #[test]
    fn the_example_is_valid() {
        let text = include_str!("../../../examples/shop-database-to-mysql.yaml");
        let db = DatabaseConfig::from_yaml(text, None).unwrap();
        assert!(db.selector.matches("orders") && !db.selector.matches("orders_tmp"));
        let orders = db.table_spec("orders").unwrap();
        assert_eq!(
            (orders.parallelism, orders.sink.table.as_str()),
            (2, "orders_rt")
        );
    }

    #[test]
    fn each_table_is_a_sync_of_its_own() {
        assert!(DatabaseConfig::is_database_sync(FILE));
        assert!(!DatabaseConfig::is_database_sync(
            "source: {table: t}\nsink: {table: t}\n"
        ));
        let db = DatabaseConfig::from_yaml(FILE, Some(Path::new("/cfg"))).unwrap();
        let none = |_: &str| None;
        let orders = db.table_config("orders", Slot::SINGLE, &none).unwrap();
        assert_eq!(
            (orders.sync_name.as_str(), orders.spec.sink.max_rows),
            ("shop-orders", Some(5000))
        );
        assert_eq!(orders.target_name(), "serving.orders_rt");
        assert_eq!(orders.consumer_id, "pms-shop-orders");
        let customers = db.table_config("customers", Slot::SINGLE, &none).unwrap();
        assert_eq!(customers.spec.sink.max_rows(), 1000);
        assert_ne!(
            customers.checkpoint, orders.checkpoint,
            "a checkpoint of its own"
        );
    }
}

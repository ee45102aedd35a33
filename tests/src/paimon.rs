//! Paimon tables written and read by Apache Paimon's Java implementation
//! (`scripts/paimon-java.sh`, a small Maven project under `tests/paimon-java`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use serde_json::{json, Value as Json};

use crate::compare::ColumnType;
use crate::repo_root;

/// Which reference implementation writes the table (reads always use Paimon Java).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Writer {
    Java,
    /// `pypaimon` from PyPI (`tests/pypaimon/write.py`): no compaction; deletes via `rowkind.field`.
    PyPaimon,
}

/// A table in a throw-away warehouse (its own, or a [`Database`]'s); a clone names the same
/// table (the warehouse goes with the last).
#[derive(Clone)]
pub struct Table {
    dir: Arc<tempfile::TempDir>,
    /// A warehouse elsewhere than `dir` (an `hdfs://` URI), if the table was created there.
    remote: Option<String>,
    writer: Writer,
    pub database: String,
    pub name: String,
    /// `(name, type)` from the create section of the script.
    pub columns: Vec<(String, String)>,
    pub primary_keys: Vec<String>,
}

impl Table {
    /// Creates the table with the reference writer. `create` is the script's create section:
    /// `{"columns": [{"name", "type"}], "primaryKeys": [...], "partitionKeys": [...], "options": {...}}`.
    pub fn create(create: Json) -> Self {
        Self::create_with(Writer::Java, create)
    }

    /// [`Self::create`] in the warehouse at `uri` (e.g. `hdfs://127.0.0.1:9000/warehouse`).
    pub fn create_in(uri: &str, create: Json) -> Self {
        let dir = Arc::new(tempfile::tempdir().expect("tempdir"));
        let mut table = Self::described(dir, Writer::Java, "db", "t", &create);
        table.remote = Some(uri.to_string());
        table.run_script(json!({"create": create, "commits": []}));
        table
    }

    pub fn create_with(writer: Writer, create: Json) -> Self {
        let dir = Arc::new(tempfile::tempdir().expect("tempdir"));
        let table = Self::described(dir, writer, "db", "t", &create);
        table.run_script(json!({"create": create, "commits": []}));
        table
    }

    /// The table `database.name` of the warehouse `dir` as `create` makes it (not written here).
    fn described(
        dir: Arc<tempfile::TempDir>,
        writer: Writer,
        database: &str,
        name: &str,
        create: &Json,
    ) -> Self {
        let columns = create["columns"]
            .as_array()
            .expect("columns")
            .iter()
            .map(|c| {
                (
                    c["name"].as_str().unwrap().to_string(),
                    c["type"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let primary_keys = create["primaryKeys"]
            .as_array()
            .expect("primaryKeys")
            .iter()
            .map(|k| k.as_str().unwrap().to_string())
            .collect();
        Self {
            dir,
            remote: None,
            writer,
            database: database.into(),
            name: name.into(),
            columns,
            primary_keys,
        }
    }

    /// Copies this table's warehouse to `to` (a new directory), e.g. to cache a large table.
    pub fn save_warehouse(&self, to: &Path) {
        copy_dir(self.warehouse(), to);
    }

    /// Replaces this table's warehouse with a copy of `from` (saved by [`Self::save_warehouse`]
    /// from a table created the same way).
    pub fn load_warehouse(&self, from: &Path) {
        std::fs::remove_dir_all(self.table_dir()).expect("remove the table");
        copy_dir(
            &from.join(format!("{}.db", self.database)),
            self.warehouse(),
        );
    }

    pub fn warehouse(&self) -> &Path {
        self.dir.path()
    }

    /// Where the warehouse is, as Paimon and the worker name it: its URI, or its local path.
    pub fn warehouse_location(&self) -> String {
        self.remote
            .clone()
            .unwrap_or_else(|| self.warehouse().display().to_string())
    }

    pub fn table_dir(&self) -> PathBuf {
        self.dir
            .path()
            .join(format!("{}.db", self.database))
            .join(&self.name)
    }

    /// Commits rows (`[["+I", [values…]], …]`), one commit per call. Returns the latest snapshot.
    pub fn commit(&self, rows: &[(&str, Json)]) -> i64 {
        let rows: Vec<Json> = rows
            .iter()
            .map(|(kind, values)| json!({"kind": kind, "values": values}))
            .collect();
        self.commits(vec![json!({"rows": rows})])
    }

    /// Runs several commit steps (`{"rows": …}`, `{"compact": "full"}`, `{"generate": …}`).
    pub fn commits(&self, commits: Vec<Json>) -> i64 {
        self.commits_by(self.writer, commits)
    }

    /// [`Self::commits`] by `writer` instead of the table's own (e.g. Paimon Java's compactions
    /// of a table pypaimon writes).
    pub fn commits_by(&self, writer: Writer, commits: Vec<Json>) -> i64 {
        let out = self.run_script_by(writer, json!({"commits": commits}));
        out.lines()
            .filter_map(|l| serde_json::from_str::<Json>(l).ok())
            .filter_map(|j| j["snapshot"].as_i64())
            .next_back()
            .unwrap_or_else(|| self.latest())
    }

    pub fn compact(&self) -> i64 {
        self.commits(vec![json!({"compact": "full"})])
    }

    /// `script` addressed to this table.
    fn addressed(&self, mut script: Json) -> Json {
        script["warehouse"] = json!(self.warehouse_location());
        script["database"] = json!(self.database);
        script["table"] = json!(self.name);
        script
    }

    fn run_script(&self, script: Json) -> String {
        self.run_script_by(self.writer, script)
    }

    fn run_script_by(&self, writer: Writer, script: Json) -> String {
        let script = self.addressed(script);
        let file = self.dir.path().join(format!(".script-{}.json", self.name));
        std::fs::write(&file, serde_json::to_vec_pretty(&script).unwrap()).unwrap();
        match writer {
            Writer::Java => paimon_java(&["write", file.to_str().unwrap()]),
            Writer::PyPaimon => run_tool(
                Command::new("python3")
                    .arg(repo_root().join("tests/pypaimon/write.py"))
                    .args(["write", file.to_str().unwrap()]),
                "tests/pypaimon/write.py (needs `pip install pypaimon==2.1.0`)",
            ),
        }
    }

    pub fn latest(&self) -> i64 {
        let out = paimon_java(&[
            "latest",
            &self.warehouse_location(),
            &self.database,
            &self.name,
        ]);
        out.trim()
            .parse()
            .unwrap_or_else(|_| panic!("latest snapshot: {out}"))
    }

    pub fn expire(&self, retain_max: u32) {
        paimon_java(&[
            "expire",
            &self.warehouse_location(),
            &self.database,
            &self.name,
            "--retain-max",
            &retain_max.to_string(),
        ]);
    }

    /// The names of the files in the table's `consumer/` directory (temporary files left out),
    /// sorted.
    pub fn consumer_files(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.table_dir().join("consumer"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with('.'))
            .collect();
        names.sort();
        names
    }

    /// Each consumer's next snapshot, as Paimon Java reads the table's consumer files.
    pub fn consumers(&self) -> BTreeMap<String, i64> {
        paimon_java(&[
            "consumers",
            &self.warehouse_location(),
            &self.database,
            &self.name,
        ])
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(id, next)| (id.to_string(), next.trim().parse().expect("a snapshot id")))
        .collect()
    }

    /// Paimon's `rollbackTo(snapshot)`: the later snapshots are deleted and their ids are
    /// taken again by the next commits.
    pub fn rollback_to(&self, snapshot: i64) {
        paimon_java(&[
            "rollback",
            &self.warehouse_location(),
            &self.database,
            &self.name,
            &snapshot.to_string(),
        ]);
    }

    /// DROP TABLE, then the table created again with `create` (a new table of the same name,
    /// whose snapshot ids start at 1 again).
    pub fn drop_and_create(&self, create: Json) {
        paimon_java(&[
            "drop",
            &self.warehouse_location(),
            &self.database,
            &self.name,
        ]);
        self.run_script(json!({"create": create, "commits": []}));
    }

    /// The reference batch read of a snapshot (default latest), sorted by primary key.
    pub fn read(&self, snapshot: Option<i64>) -> Vec<Vec<Json>> {
        let wh = self.warehouse_location();
        let mut args = vec![
            "read".to_string(),
            wh,
            self.database.clone(),
            self.name.clone(),
        ];
        if let Some(s) = snapshot {
            args.push("--snapshot".into());
            args.push(s.to_string());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        paimon_java(&args)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                serde_json::from_str::<Vec<Json>>(l)
                    .unwrap_or_else(|e| panic!("reference row {l}: {e}"))
            })
            .collect()
    }

    /// Columns with their comparison type, optionally renamed/excluded like the sink does.
    pub fn compare_columns(&self) -> Vec<(String, ColumnType)> {
        self.columns
            .iter()
            .map(|(n, t)| (n.clone(), ColumnType::parse(t)))
            .collect()
    }
}

/// A throw-away warehouse holding a database of many tables.
pub struct Database {
    dir: Arc<tempfile::TempDir>,
    pub name: String,
}

impl Database {
    pub fn new(name: &str) -> Self {
        Self {
            dir: Arc::new(tempfile::tempdir().expect("tempdir")),
            name: name.into(),
        }
    }

    pub fn warehouse(&self) -> &Path {
        self.dir.path()
    }

    /// Creates tables `(name, create section, commit steps)` in one run of the Java writer.
    pub fn create_tables(&self, tables: Vec<(&str, Json, Vec<Json>)>) -> Vec<Table> {
        let (tables, scripts): (Vec<Table>, Vec<Json>) = tables
            .into_iter()
            .map(|(name, create, commits)| {
                let t = Table::described(self.dir.clone(), Writer::Java, &self.name, name, &create);
                let script = t.addressed(json!({"create": create, "commits": commits}));
                (t, script)
            })
            .unzip();
        let file = self.dir.path().join(".script-create.json");
        std::fs::write(&file, serde_json::to_vec_pretty(&scripts).unwrap()).unwrap();
        paimon_java(&["write", file.to_str().unwrap()]);
        tables
    }

    /// Commit steps for several tables `(table, steps)` in one run of the Java writer.
    pub fn commit(&self, commits: Vec<(&Table, Vec<Json>)>) {
        let scripts: Vec<Json> = commits
            .into_iter()
            .map(|(t, steps)| t.addressed(json!({"commits": steps})))
            .collect();
        let file = self.dir.path().join(".script-commit.json");
        std::fs::write(&file, serde_json::to_vec_pretty(&scripts).unwrap()).unwrap();
        paimon_java(&["write", file.to_str().unwrap()]);
    }

    /// The reference read of the latest snapshot of each of `tables`, in one run of the Java
    /// reader.
    pub fn read_tables(&self, tables: &[&Table]) -> BTreeMap<String, Vec<Vec<Json>>> {
        let mut args = vec![
            "read-tables".to_string(),
            self.warehouse().display().to_string(),
            self.name.clone(),
        ];
        args.extend(tables.iter().map(|t| t.name.clone()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut out: BTreeMap<String, Vec<Vec<Json>>> = BTreeMap::new();
        let mut current = String::new();
        for line in paimon_java(&args).lines().filter(|l| !l.trim().is_empty()) {
            if let Some(name) = line.strip_prefix("# ") {
                current = name.to_string();
                out.entry(current.clone()).or_default();
            } else {
                let row = serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("reference row {line}: {e}"));
                out.entry(current.clone()).or_default().push(row);
            }
        }
        out
    }

    /// DROP TABLE, through Paimon's catalog.
    pub fn drop_table(&self, table: &str) {
        paimon_java(&[
            "drop",
            self.warehouse().to_str().unwrap(),
            &self.name,
            table,
        ]);
    }
}

/// Runs the Java reference tool; a failure is a test failure with its output. Under
/// `scripts/with-paimon-java.sh` the call goes to its long-lived server; otherwise a JVM is
/// started for it.
pub fn paimon_java(args: &[&str]) -> String {
    match std::env::var("PMS_PAIMON_JAVA_SOCKET") {
        Ok(socket) => served_call(&socket, args),
        Err(_) => run_tool(
            Command::new(repo_root().join("scripts/paimon-java.sh")).args(args),
            "scripts/paimon-java.sh (needs Java 17 and Maven)",
        ),
    }
}

/// One call to the server at `socket`: a line with the arguments (a JSON array), answered by
/// a line `{"code", "stdout", "stderr"}`.
fn served_call(socket: &str, args: &[&str]) -> String {
    use std::io::{Read, Write};
    let what = format!("the Java reference server at {socket} (PMS_PAIMON_JAVA_SOCKET)");
    let mut call = std::os::unix::net::UnixStream::connect(socket)
        .unwrap_or_else(|e| panic!("can't reach {what}: {e}"));
    let request = serde_json::to_string(args).expect("arguments as JSON");
    writeln!(call, "{request}").unwrap_or_else(|e| panic!("can't call {what}: {e}"));
    let mut reply = String::new();
    call.read_to_string(&mut reply)
        .unwrap_or_else(|e| panic!("no reply from {what}: {e}"));
    let reply: serde_json::Value = serde_json::from_str(&reply)
        .unwrap_or_else(|e| panic!("{what} replied {reply:?} to {args:?}: {e}"));
    let text = |k: &str| reply[k].as_str().unwrap_or_default().to_string();
    if reply["code"] != 0 {
        panic!(
            "paimon-java {args:?} failed ({what}, code {}):\n{}\n{}",
            reply["code"],
            text("stdout"),
            text("stderr")
        );
    }
    text("stdout")
}

fn run_tool(cmd: &mut Command, what: &str) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("can't run {what}: {e}"));
    if !out.status.success() {
        panic!(
            "{what} failed: {cmd:?}\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `cp -a from to`: `to` is created, or `from` goes inside it when it exists.
fn copy_dir(from: &Path, to: &Path) {
    let status = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .expect("run cp");
    assert!(
        status.success(),
        "cp -a {} {}",
        from.display(),
        to.display()
    );
}

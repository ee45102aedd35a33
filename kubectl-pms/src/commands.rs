//! The commands: each reads or edits what a user would, and says what it did.

use k8s_openapi::jiff::Timestamp;
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Client, ResourceExt};
use pms_crds::{
    PaimonMysqlDatabaseSync, PaimonMysqlSync, PaimonMysqlSyncSavepoint,
    PaimonMysqlSyncSavepointSpec,
};
use serde_json::json;

use crate::redact::redact;
use crate::status;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot reach the Kubernetes API (is KUBECONFIG set?): {0}")]
    Connect(kube::Error),
    #[error("{what}: {source}")]
    Api {
        what: String,
        #[source]
        source: kube::Error,
    },
    #[error("the kubeconfig: {0}")]
    Config(String),
    #[error("{0}")]
    NotFound(String),
    /// Not confirmed (answered no, or no terminal to ask on and no `--yes`).
    #[error("{0}")]
    NotConfirmed(String),
    /// `kubectl pms check` found problems (or could not run): its report, printed on stdout.
    #[error("the check found problems or could not run (its report is above)")]
    CheckFailed(String),
}

/// Asks `question` on the terminal unless `yes` (`--yes`): what stops writers or replaces a
/// table is done only when confirmed. Without a terminal (a script) `--yes` is required.
fn confirm(question: &str, yes: bool) -> Result<()> {
    use std::io::{BufRead, IsTerminal, Write};
    if yes {
        return Ok(());
    }
    if !std::io::stdin().is_terminal() {
        return Err(Error::NotConfirmed(format!(
            "{question} Not done: there is no terminal to ask on; pass --yes to confirm"
        )));
    }
    eprint!("{question} [y/N] ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    let _ = std::io::stdin().lock().read_line(&mut answer);
    match answer.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => Ok(()),
        _ => Err(Error::NotConfirmed(
            "not confirmed: nothing was changed".into(),
        )),
    }
}

/// Whether `sp` can be restored into `sync`: a savepoint of that sync, Completed.
fn restorable(sp: &PaimonMysqlSyncSavepoint, sync: &str) -> Result<()> {
    let name = sp.metadata.name.clone().unwrap_or_default();
    if sp.spec.sync_name != sync {
        return Err(Error::NotFound(format!(
            "savepoint {name} is of sync {}, not {sync}",
            sp.spec.sync_name
        )));
    }
    let state = sp.status.as_ref().map(|s| s.state);
    if state != Some(pms_crds::SavepointState::Completed) {
        let state = state.map_or("not started".to_string(), |s| format!("{s:?}"));
        return Err(Error::NotFound(format!(
            "savepoint {name} is {state}, not Completed: only a Completed savepoint can be restored (`kubectl get pmssp {name}` shows it)"
        )));
    }
    Ok(())
}

pub type Result<T> = std::result::Result<T, Error>;

/// The API client, as kubectl builds it: from `kubeconfig` (else `$KUBECONFIG`, else
/// `~/.kube/config`, else the pod's service account) and its `context` (else the current one).
pub async fn client(
    kubeconfig: Option<&std::path::Path>,
    context: Option<String>,
) -> Result<Client> {
    use kube::config::{Config, KubeConfigOptions, Kubeconfig};
    let options = KubeConfigOptions {
        context,
        ..Default::default()
    };
    let config = match kubeconfig {
        Some(path) => {
            let file = Kubeconfig::read_from(path)
                .map_err(|e| Error::Config(format!("{}: {e}", path.display())))?;
            Config::from_custom_kubeconfig(file, &options).await
        }
        None if options.context.is_some() => Config::from_kubeconfig(&options).await,
        None => return Client::try_default().await.map_err(Error::Connect),
    }
    .map_err(|e| Error::Config(e.to_string()))?;
    Client::try_from(config).map_err(Error::Connect)
}

/// What `status`, `logs` and `report` take a name for: a sync or a database sync.
pub enum Target {
    Sync(Box<PaimonMysqlSync>),
    Database(Box<PaimonMysqlDatabaseSync>),
}

pub struct Ctx {
    pub client: Client,
    pub ns: String,
}

impl Ctx {
    pub fn api<K>(&self) -> Api<K>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>,
    {
        Api::namespaced(self.client.clone(), &self.ns)
    }

    /// The object `name` of kind `K` in this namespace, if there is one.
    pub async fn get_opt<K>(&self, name: &str) -> Result<Option<K>>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
            + Clone
            + serde::de::DeserializeOwned
            + std::fmt::Debug,
    {
        self.api::<K>()
            .get_opt(name)
            .await
            .map_err(|source| api(format!("get {} {}/{name}", K::kind(&()), self.ns), source))
    }

    pub async fn sync(&self, name: &str) -> Result<Option<PaimonMysqlSync>> {
        self.get_opt(name).await
    }

    /// The sync or database sync `name` (a sync first), or an error that says there is neither.
    pub async fn target(&self, name: &str) -> Result<Target> {
        if let Some(pms) = self.sync(name).await? {
            return Ok(Target::Sync(Box::new(pms)));
        }
        self.get_opt::<PaimonMysqlDatabaseSync>(name)
            .await?
            .map(|pmds| Target::Database(Box::new(pmds)))
            .ok_or_else(|| {
                Error::NotFound(format!(
                    "no PaimonMysqlSync or PaimonMysqlDatabaseSync {name} in namespace {}",
                    self.ns
                ))
            })
    }

    pub async fn savepoints(&self) -> Result<Vec<PaimonMysqlSyncSavepoint>> {
        Ok(self
            .api::<PaimonMysqlSyncSavepoint>()
            .list(&ListParams::default())
            .await
            .map_err(|source| api(format!("list savepoints in {}", self.ns), source))?
            .items)
    }

    /// The sync, or an error that says there is none.
    pub async fn existing_sync(&self, name: &str) -> Result<PaimonMysqlSync> {
        self.sync(name).await?.ok_or_else(|| {
            Error::NotFound(format!(
                "no PaimonMysqlSync {name} in namespace {} (kubectl get pms -n {})",
                self.ns, self.ns
            ))
        })
    }

    /// A merge patch of the sync's spec: the field a user would set by hand.
    async fn patch_spec(&self, sync: &str, spec: serde_json::Value) -> Result<()> {
        self.existing_sync(sync).await?;
        self.api::<PaimonMysqlSync>()
            .patch(
                sync,
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": spec})),
            )
            .await
            .map(drop)
            .map_err(|source| api(format!("patch PaimonMysqlSync {}/{sync}", self.ns), source))
    }
}

pub fn api(what: String, source: kube::Error) -> Error {
    Error::Api { what, source }
}

/// A trigger value no earlier one has: the command and the time.
fn token() -> String {
    format!("kubectl-pms-{}", Timestamp::now().strftime("%Y%m%d-%H%M%S"))
}

/// How `status` prints: the screen, or the resource itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Output {
    Text,
    Yaml,
    Json,
}

pub async fn status(ctx: &Ctx, name: &str, output: Output) -> Result<String> {
    Ok(match (ctx.target(name).await?, output) {
        (Target::Sync(pms), Output::Text) => {
            status::sync_screen(&pms, &ctx.savepoints().await?, Timestamp::now())
        }
        (Target::Database(pmds), Output::Text) => status::database_screen(&pmds),
        (Target::Sync(pms), _) => document(&pms, output),
        (Target::Database(pmds), _) => document(&pmds, output),
    })
}

/// `status --watch`: the status again every `every`, printed when it changed (on a terminal,
/// in place of the last), until interrupted.
pub async fn watch_status(
    ctx: &Ctx,
    name: &str,
    output: Output,
    every: std::time::Duration,
) -> Result<String> {
    use std::io::{IsTerminal, Write};
    let terminal = std::io::stdout().is_terminal();
    let mut last = String::new();
    loop {
        let now = status(ctx, name, output).await?;
        if now != last {
            match terminal {
                // Home and clear, as `watch` does.
                true => print!("\x1b[H\x1b[2J{now}"),
                false => print!("--- {}\n{now}", Timestamp::now()),
            }
            let _ = std::io::stdout().flush();
            last = now;
        }
        tokio::time::sleep(every).await;
    }
}

/// A resource as JSON, without its managed fields (the API server's bookkeeping).
pub fn resource_value<T: serde::Serialize>(resource: &T) -> serde_json::Value {
    let mut value = serde_json::to_value(resource).unwrap_or_default();
    if let Some(meta) = value.get_mut("metadata").and_then(|m| m.as_object_mut()) {
        meta.remove("managedFields");
    }
    value
}

/// A resource (or a report) as YAML or JSON, without its managed fields, redacted.
pub fn document<T: serde::Serialize>(resource: &T, output: Output) -> String {
    let value = resource_value(resource);
    let text = match output {
        Output::Json => serde_json::to_string_pretty(&value).unwrap_or_default() + "\n",
        _ => serde_yaml::to_string(&value).unwrap_or_default(),
    };
    redact(&text)
}

pub async fn savepoint(ctx: &Ctx, sync: &str, name: Option<String>) -> Result<String> {
    ctx.existing_sync(sync).await?;
    let name =
        name.unwrap_or_else(|| format!("{sync}-{}", Timestamp::now().strftime("%Y%m%d-%H%M%S")));
    let sp = PaimonMysqlSyncSavepoint::new(
        &name,
        PaimonMysqlSyncSavepointSpec {
            sync_name: sync.to_string(),
        },
    );
    ctx.api::<PaimonMysqlSyncSavepoint>()
        .create(&PostParams::default(), &sp)
        .await
        .map_err(|source| {
            api(
                format!("create PaimonMysqlSyncSavepoint {}/{name}", ctx.ns),
                source,
            )
        })?;
    Ok(format!(
        "created PaimonMysqlSyncSavepoint {}/{name} (spec.syncName {sync}); `kubectl get pmssp -n {} {name}` shows its state\n",
        ctx.ns, ctx.ns
    ))
}

pub async fn rebuild(ctx: &Ctx, sync: &str, yes: bool) -> Result<String> {
    ctx.existing_sync(sync).await?;
    confirm(
        &format!(
            "Rebuild {}/{sync}? Its workers stop while the table is rebuilt from a full read and swapped in.",
            ctx.ns
        ),
        yes,
    )?;
    let t = token();
    ctx.patch_spec(sync, json!({"rebuild": {"trigger": t}}))
        .await?;
    Ok(format!(
        "set spec.rebuild.trigger of {}/{sync} to {t}: the operator stops the workers, rebuilds the table and \
         swaps it in; `kubectl pms status {sync}` shows the rebuild\n",
        ctx.ns
    ))
}

pub async fn verify(ctx: &Ctx, sync: &str) -> Result<String> {
    let t = token();
    ctx.patch_spec(sync, json!({"verify": {"trigger": t}}))
        .await?;
    Ok(format!(
        "set spec.verify.trigger of {}/{sync} to {t}: a verify Job starts while the sync runs; \
         `kubectl pms status {sync}` shows its result\n",
        ctx.ns
    ))
}

pub async fn restore(ctx: &Ctx, sync: &str, savepoint: &str, yes: bool) -> Result<String> {
    let found = ctx.get_opt::<PaimonMysqlSyncSavepoint>(savepoint).await?;
    let Some(sp) = found else {
        return Err(Error::NotFound(format!(
            "no PaimonMysqlSyncSavepoint {savepoint} in namespace {} (kubectl get pmssp -n {})",
            ctx.ns, ctx.ns
        )));
    };
    restorable(&sp, sync)?;
    let ns = &ctx.ns;
    let question = format!(
        "Restore {ns}/{sync} from savepoint {savepoint}? Its workers stop, and every slot goes on after the savepoint's snapshot."
    );
    let restore_from = json!({"savepoint": savepoint, "snapshotId": null});
    set_restore_from(ctx, sync, &question, yes, restore_from).await?;
    Ok(format!(
        "set spec.restoreFrom.savepoint of {ns}/{sync} to {savepoint}: the operator stops the workers and starts \
         them from the savepoint\n"
    ))
}

/// Sets `spec.restoreFrom` of `sync` once `question` is confirmed (a restore stops the workers).
async fn set_restore_from(
    ctx: &Ctx,
    sync: &str,
    question: &str,
    yes: bool,
    restore_from: serde_json::Value,
) -> Result<()> {
    confirm(question, yes)?;
    ctx.patch_spec(sync, json!({ "restoreFrom": restore_from }))
        .await
}

/// Restarts the sync from snapshot `snapshot_id` of its Paimon table (the last one counted as
/// applied; every slot goes on with the next): sets `spec.restoreFrom.snapshotId`, once
/// confirmed.
pub async fn restore_to_snapshot(
    ctx: &Ctx,
    sync: &str,
    snapshot_id: i64,
    yes: bool,
) -> Result<String> {
    ctx.existing_sync(sync).await?;
    let ns = &ctx.ns;
    let question = format!(
        "Restore {ns}/{sync} to snapshot {snapshot_id}? Its workers stop, and every slot goes on with snapshot {} \
         (what MySQL holds of later snapshots is written again).",
        snapshot_id + 1
    );
    let restore_from = json!({"snapshotId": snapshot_id, "savepoint": null});
    set_restore_from(ctx, sync, &question, yes, restore_from).await?;
    Ok(format!(
        "set spec.restoreFrom.snapshotId of {ns}/{sync} to {snapshot_id}: the operator stops the workers and starts \
         them after that snapshot\n"
    ))
}

/// Every sync of the namespace, or of every namespace (`all`), one line each.
pub async fn list(ctx: &Ctx, all: bool) -> Result<String> {
    let syncs_api: Api<PaimonMysqlSync> = if all {
        Api::all(ctx.client.clone())
    } else {
        ctx.api()
    };
    let where_ = if all {
        "every namespace".to_string()
    } else {
        ctx.ns.clone()
    };
    let mut syncs = syncs_api
        .list(&ListParams::default())
        .await
        .map_err(|source| api(format!("list PaimonMysqlSyncs in {where_}"), source))?
        .items;
    syncs.sort_by_key(|s| (s.namespace(), s.name_any()));
    Ok(status::list_screen(&syncs, all, Timestamp::now()))
}

/// Restarts every worker once, each slot from its checkpoint: sets `spec.restartNonce`.
pub async fn restart(ctx: &Ctx, sync: &str) -> Result<String> {
    let t = token();
    ctx.patch_spec(sync, json!({"restartNonce": t})).await?;
    Ok(format!(
        "set spec.restartNonce of {}/{sync} to {t}: every worker restarts once, each slot from its checkpoint\n",
        ctx.ns
    ))
}

pub async fn set_state(ctx: &Ctx, sync: &str, state: &str) -> Result<String> {
    ctx.patch_spec(sync, json!({"state": state})).await?;
    Ok(format!("set spec.state of {}/{sync} to {state}\n", ctx.ns))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pms_crds::{PaimonMysqlSyncSavepointSpec, SavepointState, SavepointStatus};

    #[test]
    fn only_a_completed_savepoint_of_the_sync_is_restorable() {
        let sp = |sync: &str, state: Option<SavepointState>| {
            let mut sp = PaimonMysqlSyncSavepoint::new(
                "sp1",
                PaimonMysqlSyncSavepointSpec {
                    sync_name: sync.into(),
                },
            );
            sp.status = state.map(|state| SavepointStatus {
                state,
                ..Default::default()
            });
            sp
        };
        assert!(restorable(&sp("s", Some(SavepointState::Completed)), "s").is_ok());
        let pending = restorable(&sp("s", Some(SavepointState::Pending)), "s").unwrap_err();
        assert!(
            pending
                .to_string()
                .contains("sp1 is Pending, not Completed"),
            "{pending}"
        );
        let fresh = restorable(&sp("s", None), "s").unwrap_err();
        assert!(fresh.to_string().contains("not started"), "{fresh}");
        let other = restorable(&sp("t", Some(SavepointState::Completed)), "s").unwrap_err();
        assert!(other.to_string().contains("is of sync t, not s"), "{other}");
    }

    #[test]
    fn a_resource_is_printed_without_its_managed_fields() {
        let mut pms: PaimonMysqlSync = serde_json::from_value(json!({
            "apiVersion": "paimonsync.io/v1alpha1", "kind": "PaimonMysqlSync",
            "metadata": {"name": "orders", "managedFields": [{"manager": "kubectl"}]},
            "spec": {
                "source": {"warehouse": "/wh", "database": "db", "table": "t"},
                "sink": {"url": "mysql://writer:s3cret@db:3306/serving", "table": "orders"},
            },
        }))
        .unwrap();
        assert!(pms.metadata.managed_fields.is_some());
        let value = resource_value(&pms);
        assert!(value["metadata"].get("managedFields").is_none(), "{value}");
        assert_eq!(value["metadata"]["name"], "orders");
        let yaml = document(&pms, Output::Yaml);
        assert!(
            !yaml.contains("managedFields") && !yaml.contains("s3cret"),
            "{yaml}"
        );
        pms.metadata.managed_fields = None;
        assert_eq!(resource_value(&pms), value);
    }

    #[test]
    fn without_a_terminal_only_yes_confirms() {
        // The test's stdin is not a terminal (cargo test runs it without one).
        if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
            return;
        }
        assert!(confirm("Rebuild?", true).is_ok());
        let refused = confirm("Rebuild?", false).unwrap_err();
        assert!(refused.to_string().contains("pass --yes"), "{refused}");
    }
}

//! A sync's table generations, what `run`, `restore` and `rebuild` all need of them: the running
//! one; the new one a rebuild loads beside it (`<table>__pms_new`, filled by the sync
//! `<sync>-rebuild`, whose checkpoints are the marker of a rebuild in progress); and the one a
//! rebuild replaced (`<table>__pms_old`, kept for `rebuild.retainOld`). Below the pipeline and
//! the rebuild, so that neither needs the other for these.

use pms_crds::contract::consumer_id;
use pms_crds::ScanMode;
use tracing::info;

use crate::checkpoint::Checkpointer;
use crate::config::{CheckpointTarget, WorkerConfig};
use crate::error::{Result, WorkerError};
use crate::sink::MysqlConnection;

/// Suffixes of the new generation's table, the replaced table, and the new generation's sync.
pub const SHADOW_SUFFIX: &str = "__pms_new";
const OLD_SUFFIX: &str = "__pms_old";
use pms_crds::contract::REBUILD_SUFFIX as SYNC_SUFFIX;
/// Of the new generation's checkpoint files (after the sync's own file name).
const SHADOW_FILE_SUFFIX: &str = ".rebuild";

/// Whether a rebuild of this sync is in progress: the new generation's checkpoint of this
/// slot (a file beside the sync's, or the ConfigMap `<sync>-rebuild-checkpoint-<slot>`) exists.
pub async fn in_progress(cfg: &WorkerConfig) -> Result<bool> {
    Ok(Checkpointer::peek(&shadow(cfg)).await?.is_some())
}

/// Refuses to run the old generation while a rebuild of it is in progress.
pub async fn refuse_if_in_progress(cfg: &WorkerConfig) -> Result<()> {
    if in_progress(cfg).await? {
        return Err(WorkerError::Config(format!(
            "a rebuild of this sync is in progress (the new generation's checkpoint {} exists): finish it with \
             `pms-worker rebuild` (under the operator: it runs while status.rebuild says so)",
            shadow_location(cfg)
        )));
    }
    Ok(())
}

/// Where the new generation of `cfg`'s slot keeps its checkpoint, for messages.
pub fn shadow_location(cfg: &WorkerConfig) -> String {
    let shadow = shadow(cfg);
    match &shadow.checkpoint {
        CheckpointTarget::File(path) => path.display().to_string(),
        CheckpointTarget::ConfigMap { .. } => format!(
            "ConfigMap {}",
            pms_crds::contract::checkpoint_name(&shadow.sync_name, cfg.slot.index)
        ),
        CheckpointTarget::S3(s3) => format!(
            "s3://{}/{}/{}.json",
            s3.bucket,
            s3.prefix,
            pms_crds::contract::checkpoint_name(&shadow.sync_name, cfg.slot.index)
        ),
        CheckpointTarget::ProgressRow => "its progress row".into(),
    }
}

/// The new generation of slot `cfg.slot`: the same spec into the shadow table, from a full read.
pub fn shadow(cfg: &WorkerConfig) -> WorkerConfig {
    let mut shadow = cfg.clone();
    shadow.spec.sink.table = format!("{}{SHADOW_SUFFIX}", cfg.spec.sink.table);
    shadow.spec.source.scan_mode = ScanMode::LatestFull;
    shadow.spec.source.start_snapshot = None;
    shadow.spec.source.start_timestamp = None;
    shadow.spec.source.consumer_id = cfg
        .spec
        .source
        .consumer_id
        .as_ref()
        .map(|id| format!("{id}{SYNC_SUFFIX}"));
    shadow.sync_name = format!("{}{SYNC_SUFFIX}", cfg.sync_name);
    shadow.consumer_id = consumer_id(
        shadow.spec.source.consumer_id.as_deref(),
        &shadow.external_name(),
        cfg.slot,
    );
    shadow.checkpoint_files.suffix = SHADOW_FILE_SUFFIX.to_string();
    if let CheckpointTarget::File(_) = &cfg.checkpoint {
        shadow.checkpoint = CheckpointTarget::File(shadow.checkpoint_files.path(cfg.slot));
    }
    // ConfigMap checkpoints: the new sync name names them (`<sync>-rebuild-checkpoint-<k>`).
    shadow
}

/// The table a rebuild replaced: `<table>__pms_old`.
pub fn old_table(cfg: &WorkerConfig) -> String {
    format!("{}{OLD_SUFFIX}", cfg.spec.sink.table)
}

/// Drops [`old_table`] once `rebuild.retainOld` has passed since it was replaced. With `must`,
/// one still retained is an error (a new rebuild would need its name).
pub async fn drop_old_if_due(
    mysql: &MysqlConnection,
    cfg: &WorkerConfig,
    must: bool,
) -> Result<()> {
    let old = &old_table(cfg);
    if !mysql.table_exists(old).await? {
        return Ok(());
    }
    let retain =
        chrono::Duration::from_std(cfg.spec.rebuild.retain_old.0).unwrap_or(chrono::Duration::MAX);
    match mysql.replaced_at(old).await? {
        Some(at) if chrono::Utc::now() - at >= retain => {
            mysql.drop_table(old).await?;
            info!(table = %old, replaced_at = %at, "dropped the table a rebuild replaced (rebuild.retainOld passed)");
            Ok(())
        }
        at if must => Err(WorkerError::Config(format!(
            "{old} exists ({}): drop it, or wait for rebuild.retainOld to pass, before another rebuild",
            at.map_or("not made by a rebuild".into(), |at| format!("replaced at {at}, kept for {}", cfg.spec.rebuild.retain_old))
        ))),
        _ => Ok(()),
    }
}

//! Checkpoints in a local JSON file (the standalone default), replaced atomically. A slot's
//! file is named for the layout (`.slotK-of-N` when there are several slots), so after a
//! rescale the files of earlier layouts are still there: what slot K holds is its newest file
//! in any layout, as one object per slot would hold in the other stores, and `rescale.rs`
//! resolves a rescale from them alike.

use std::collections::HashSet;
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use pms_crds::contract::Slot;

use super::Checkpoint;
use crate::error::{Result, WorkerError};

/// The largest `parallelism` the CRD allows.
const MAX_SLOTS: u32 = 256;

pub struct FileCheckpointStore {
    path: PathBuf,
    slot: Slot,
    /// The file of a slot in a layout.
    file_of: Box<dyn Fn(Slot) -> PathBuf + Send + Sync>,
}

impl FileCheckpointStore {
    pub fn new(slot: Slot, file_of: impl Fn(Slot) -> PathBuf + Send + Sync + 'static) -> Self {
        Self {
            path: file_of(slot),
            slot,
            file_of: Box::new(file_of),
        }
    }

    pub fn location(&self) -> String {
        self.path.display().to_string()
    }

    fn err(&self, message: impl Into<String>) -> WorkerError {
        WorkerError::Checkpoint {
            location: self.location(),
            message: message.into(),
        }
    }

    /// This slot's checkpoint (after a rescale, where the new slot starts: `rescale::resolve`).
    pub async fn load(&self) -> Result<Option<Checkpoint>> {
        let present = self.files_present()?;
        let own = self.newest_of(self.slot.index, &present)?;
        let read = |j| {
            let found = self.newest_of(j, &present);
            async move { found }
        };
        super::rescale::resolve(self.slot, own, read, |m| self.err(m)).await
    }

    /// The names of the files in the checkpoint's directory (names, not paths: a checkpoint
    /// beside a config given without a directory is `cp.json`, listed from `.`).
    fn files_present(&self) -> Result<HashSet<OsString>> {
        let dir = self.dir();
        match std::fs::read_dir(dir) {
            Ok(entries) => Ok(entries.flatten().map(|e| e.file_name()).collect()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(HashSet::new()),
            Err(e) => Err(self.err(format!("listing {}: {e}", dir.display()))),
        }
    }

    /// Slot `j`'s newest checkpoint in any layout.
    fn newest_of(&self, j: u32, present: &HashSet<OsString>) -> Result<Option<Checkpoint>> {
        let mut newest: Option<Checkpoint> = None;
        for count in (j + 1)..=MAX_SLOTS.max(self.slot.count) {
            let path = (self.file_of)(Slot::new(j, count)?);
            if !path.file_name().is_some_and(|name| present.contains(name)) {
                continue;
            }
            if let Some(cp) = self.read(&path)? {
                if newest.as_ref().is_none_or(|n| cp.updated > n.updated) {
                    newest = Some(cp);
                }
            }
        }
        Ok(newest)
    }

    fn read(&self, path: &Path) -> Result<Option<Checkpoint>> {
        match std::fs::read(path) {
            Ok(bytes) => {
                serde_json::from_slice(&bytes)
                    .map(Some)
                    .map_err(|e| WorkerError::Checkpoint {
                        location: path.display().to_string(),
                        message: format!("is corrupt ({e}); restore it or delete it to start over"),
                    })
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(self.err(e.to_string())),
        }
    }

    fn dir(&self) -> &Path {
        self.path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
    }

    pub fn remove(&self) -> Result<()> {
        match std::fs::remove_file(&self.path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(self.err(e.to_string())),
            _ => Ok(()),
        }
    }

    /// Writes to a temporary file in the same directory, syncs it, then renames it over the
    /// old one: a crash leaves either the old or the new checkpoint, never a torn one.
    pub fn save(&self, checkpoint: &Checkpoint) -> Result<()> {
        let dir = self.dir();
        std::fs::create_dir_all(dir)
            .map_err(|e| self.err(format!("creating {}: {e}", dir.display())))?;
        let tmp = dir.join(format!(
            ".{}.tmp",
            self.path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        ));
        let body = serde_json::to_vec_pretty(checkpoint).map_err(|e| self.err(e.to_string()))?;
        let write = || -> std::io::Result<()> {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(&body)?;
            f.sync_all()?;
            std::fs::rename(&tmp, &self.path)?;
            // Make the rename itself durable.
            std::fs::File::open(dir)?.sync_all()
        };
        write().map_err(|e| self.err(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pms_crds::contract::{Position, ReadPoint};

    #[tokio::test]
    async fn round_trip_and_corruption_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cp.json");
        let store = FileCheckpointStore::new(Slot::SINGLE, move |_| path.clone());
        assert_eq!(store.load().await.unwrap(), None);
        let cp = Checkpoint {
            sync: "s".into(),
            slot: Slot::SINGLE,
            point: ReadPoint::Changes {
                next_snapshot: 8,
                at: Position::START,
            },
            epoch: 2,
            updated: "2026-11-30T00:00:00Z".into(),
            latest_snapshot: Some(9),
            rescaled_from: None,
            paused_for: None,
            belongs_to: None,
            sweep: false,
            full_read: None,
        };
        store.save(&cp).unwrap();
        assert_eq!(store.load().await.unwrap(), Some(cp.clone()));
        assert_eq!(cp.next_snapshot(), 8);
        std::fs::write(dir.path().join("cp.json"), b"{not json").unwrap();
        assert!(store
            .load()
            .await
            .unwrap_err()
            .to_string()
            .contains("corrupt"));
    }
}

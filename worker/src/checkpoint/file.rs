//! Checkpoints in a local JSON file (the standalone default), replaced atomically.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::Checkpoint;
use crate::error::{Result, WorkerError};

pub struct FileCheckpointStore {
    path: PathBuf,
}

impl FileCheckpointStore {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
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

    pub fn load(&self) -> Result<Option<Checkpoint>> {
        match std::fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
                self.err(format!(
                    "is corrupt ({e}); restore it or delete it to start over"
                ))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(self.err(e.to_string())),
        }
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
        let dir = self
            .path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
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
    use pms_crds::contract::{Position, ReadPoint, Slot};

    #[test]
    fn round_trip_and_corruption_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileCheckpointStore::new(dir.path().join("cp.json"));
        assert_eq!(store.load().unwrap(), None);
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
        };
        store.save(&cp).unwrap();
        assert_eq!(store.load().unwrap(), Some(cp.clone()));
        assert_eq!(cp.next_snapshot(), 8);
        std::fs::write(dir.path().join("cp.json"), b"{not json").unwrap();
        assert!(store.load().unwrap_err().to_string().contains("corrupt"));
    }
}

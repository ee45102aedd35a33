//! Pooled placement: the tables of one worker pod write through one MySQL pool of at most
//! `placement.maxConnectionsPerWorker` connections, made at the first table's start, so the
//! connections a worker opens don't grow with its tables. Every table of a pooled database
//! sync writes as the same user to the same server (`pooled_refusal` refuses overrides that
//! differ). Each write holds one connection for its transaction and needs no second one
//! meanwhile, so tables waiting for a connection only queue, never deadlock; exactly-once
//! fences each table with its progress row's epoch, which takes no connection of its own.

use std::sync::Arc;

use mysql_async::{Opts, Pool};

use super::connect::{self, ServerInfo};
use crate::config::MysqlTarget;
use crate::error::WorkerError;

#[derive(Clone)]
pub struct SharedPool {
    max_connections: usize,
    pool: Arc<tokio::sync::OnceCell<(Pool, Opts, ServerInfo)>>,
}

impl std::fmt::Debug for SharedPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SharedPool(max {})", self.max_connections)
    }
}

impl SharedPool {
    pub fn new(max_connections: usize) -> Self {
        Self {
            max_connections,
            pool: Arc::default(),
        }
    }

    /// The pool (made on first use) and what its server said.
    pub(super) async fn get(
        &self,
        m: &MysqlTarget,
    ) -> Result<(Pool, Opts, ServerInfo), WorkerError> {
        self.pool
            .get_or_try_init(|| connect::connect(m, self.max_connections))
            .await
            .cloned()
    }

    /// Closes the pool at the worker's end.
    pub async fn close(self) {
        if let Some((pool, _, _)) = self.pool.get() {
            if let Err(e) = pool.clone().disconnect().await {
                tracing::warn!(error = %e, "closing the shared MySQL pool");
            }
        }
    }
}

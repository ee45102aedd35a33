//! Instants in the status, as the workers write them.

use k8s_openapi::jiff::Timestamp;

/// RFC 3339 to the second.
pub fn seconds(t: Timestamp) -> String {
    Timestamp::from_second(t.as_second())
        .map(|t| t.to_string())
        .unwrap_or_else(|_| t.to_string())
}

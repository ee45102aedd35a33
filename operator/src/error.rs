//! Errors of a reconcile. Each API error names the action and the object it was about; none
//! of them carries Secret data (a Secret read fails with the apiserver's status, never values).

use thiserror::Error;

/// What the operator was doing when the API server refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verb {
    Get,
    List,
    Apply,
    Patch,
    Delete,
    PatchStatus,
}

impl Verb {
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Apply => "apply",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
            Verb::PatchStatus => "patch status of",
        }
    }
}

#[derive(Debug, Error)]
pub enum Error {
    /// One object's call failed (`name`), or a list by label (`name` is the selector).
    #[error("{} {kind} {namespace}/{name}: {source}", .verb.as_str())]
    Api {
        verb: Verb,
        kind: String,
        namespace: String,
        name: String,
        #[source]
        source: Box<kube::Error>,
    },

    /// Another replica holds the Lease (this one was paused past it): it must not write.
    #[error("not the leader any more (the Lease is {holder}'s)")]
    NotLeader { holder: String },

    /// The status write found the resource changed since this reconcile read it.
    #[error("PaimonMysqlSync {0} changed during the reconcile; reconciling it again")]
    Changed(String),

    /// Not done yet, and nothing failed: come back shortly (a deletion whose workers are
    /// still stopping).
    #[error("{0}")]
    Waiting(String),

    #[error("PaimonMysqlSync {0} is not namespaced")]
    NotNamespaced(String),

    #[error("serializing the worker config of {sync}: {source}")]
    Yaml {
        sync: String,
        #[source]
        source: serde_yaml::Error,
    },

    #[error("finalizer of PaimonMysqlSync {sync}: {message}")]
    Finalizer { sync: String, message: String },

    /// The checkpoint store on S3 (`checkpoint.storage: s3`) refused or could not be reached.
    #[error("{what} {location}: {message}")]
    S3 {
        what: &'static str,
        location: String,
        message: String,
    },
}

impl Error {
    pub fn api<K: kube::Resource<DynamicType = ()>>(
        verb: Verb,
        namespace: &str,
        name: &str,
        source: kube::Error,
    ) -> Self {
        Error::Api {
            verb,
            kind: K::kind(&()).into_owned(),
            namespace: namespace.to_string(),
            name: name.to_string(),
            source: Box::new(source),
        }
    }

    /// Whether users should see it as a Warning event (not a benign race of two writers).
    pub fn worth_an_event(&self) -> bool {
        !matches!(
            self,
            Error::Changed(_) | Error::NotLeader { .. } | Error::Waiting(_)
        )
    }

    /// A short, bounded label for metrics (`pms_operator_reconcile_errors_total{reason}`).
    pub fn reason(&self) -> &'static str {
        match self {
            Error::Api { verb, .. } => match verb {
                Verb::Get => "get",
                Verb::List => "list",
                Verb::Apply => "apply",
                Verb::Patch => "patch",
                Verb::Delete => "delete",
                Verb::PatchStatus => "patch_status",
            },
            Error::NotLeader { .. } => "not_leader",
            Error::Changed(_) => "changed",
            Error::Waiting(_) => "waiting",
            Error::NotNamespaced(_) => "not_namespaced",
            Error::Yaml { .. } => "serialize",
            Error::Finalizer { .. } => "finalizer",
            Error::S3 { .. } => "s3",
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::Secret;

    #[test]
    fn an_api_error_names_the_action_and_the_object() {
        let source = kube::Error::Api(
            kube::core::Status::failure("secrets \"writer\" is forbidden", "Forbidden")
                .with_code(403)
                .boxed(),
        );
        let e = Error::api::<Secret>(Verb::Get, "data", "writer", source);
        let text = e.to_string();
        assert!(text.starts_with("get Secret data/writer: "), "{text}");
        assert!(text.contains("forbidden"), "{text}");
        assert_eq!(e.reason(), "get");
    }
}

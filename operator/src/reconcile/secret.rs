//! Reading a Secret: absent is `None`, any other failure an error naming it; and which
//! Secrets a sync refers to (a change of one reconciles it).

use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use pms_crds::PaimonMysqlSync;

use crate::error::{Error, Result, Verb};

/// Secret `name`, if it exists.
pub async fn get_secret(secrets: &Api<Secret>, ns: &str, name: &str) -> Result<Option<Secret>> {
    secrets
        .get_opt(name)
        .await
        .map_err(|e| Error::api::<Secret>(Verb::Get, ns, name, e))
}

/// The names of the Secrets `pms` refers to.
pub fn referenced(pms: &PaimonMysqlSync) -> Vec<&str> {
    let spec = &pms.spec;
    let s3 = spec.source.s3.as_ref();
    [
        spec.sink
            .credentials_secret_ref
            .as_ref()
            .map(|r| r.name.as_str()),
        s3.and_then(|s| s.credentials_secret_ref.as_ref())
            .map(|r| r.name.as_str()),
        spec.sink
            .tls
            .ca_secret_ref
            .as_ref()
            .map(|r| r.name.as_str()),
        spec.sink
            .tls
            .client_cert_secret_ref
            .as_ref()
            .map(|r| r.name.as_str()),
        super::store::checkpoint_secret_name(pms),
    ]
    .into_iter()
    .flatten()
    .collect()
}

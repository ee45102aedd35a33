//! Reading a Secret: absent is `None`, any other failure an error naming it.

use k8s_openapi::api::core::v1::Secret;
use kube::Api;

use crate::error::{Error, Result, Verb};

/// Secret `name`, if it exists.
pub async fn get_secret(secrets: &Api<Secret>, ns: &str, name: &str) -> Result<Option<Secret>> {
    secrets
        .get_opt(name)
        .await
        .map_err(|e| Error::api::<Secret>(Verb::Get, ns, name, e))
}

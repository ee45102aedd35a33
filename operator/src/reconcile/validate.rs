//! Checks the CRD schema can't make: referenced Secrets exist and have the expected keys.
//! Only key names are looked at; values are never read into status, events or logs.

use k8s_openapi::api::core::v1::Secret;
use kube::{Api, ResourceExt};
use pms_crds::PaimonMysqlSync;

use crate::error::{Error, Result};

pub async fn referenced_secrets(secrets: &Api<Secret>, pms: &PaimonMysqlSync) -> Result<()> {
    let mut wanted = Vec::new();
    if let Some(r) = &pms.spec.sink.credentials_secret_ref {
        wanted.push((
            "sink.credentialsSecretRef",
            r.name.clone(),
            ["username", "password"],
        ));
    }
    if let Some(r) = pms
        .spec
        .source
        .s3
        .as_ref()
        .and_then(|s| s.credentials_secret_ref.as_ref())
    {
        wanted.push((
            "source.s3.credentialsSecretRef",
            r.name.clone(),
            ["accessKeyId", "secretAccessKey"],
        ));
    }
    for (field, name, keys) in wanted {
        let secret = secrets.get_metadata_opt(&name).await?;
        if secret.is_none() {
            return Err(Error::Invalid(format!(
                "{field}: Secret {}/{name} does not exist",
                pms.namespace().unwrap_or_default()
            )));
        }
        // Key names only (a metadata read can't show them): read the Secret, keep its keys.
        let full = secrets.get(&name).await?;
        let present: Vec<String> = full
            .data
            .unwrap_or_default()
            .into_keys()
            .chain(full.string_data.unwrap_or_default().into_keys())
            .collect();
        let missing: Vec<&str> = keys
            .iter()
            .copied()
            .filter(|k| !present.iter().any(|p| p == k))
            .collect();
        if !missing.is_empty() {
            return Err(Error::Invalid(format!(
                "{field}: Secret {name} has no key {}",
                missing.join(", ")
            )));
        }
    }
    Ok(())
}

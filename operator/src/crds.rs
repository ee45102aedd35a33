//! The operator keeps its own CustomResourceDefinitions current: at start (as the leader) it
//! server-side applies the CRDs of the version it is, so `helm upgrade` (which never touches a
//! chart's `crds/`) or a new image brings the new schema, while existing resources stay. The
//! chart's `crds/` still installs them the first time (the operator needs them to start).
//!
//! Never backwards: a CRD in the cluster stamped with a later schema revision than this
//! operator's ([`pms_crds::SCHEMA_REVISION`]) is left as it is. Applying the older schema would
//! prune the newer fields from every stored resource (a `helm rollback` of the operator, or an
//! older replica winning the Lease during an upgrade).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Patch, PatchParams};
use kube::{Api, Client, ResourceExt};
use pms_crds::contract::MANAGER;
use pms_crds::{schema_revision, SCHEMA_REVISION};
use tracing::{info, warn};

/// Applies the CRDs with the operator's field manager (forcing: it owns their schemas), each
/// unless the cluster's is of a later revision.
pub async fn apply_own_crds(client: &Client) -> Result<(), String> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let params = PatchParams::apply(MANAGER).force();
    let hint =
        "The operator keeps its CRDs current and needs get/patch on customresourcedefinitions \
                (the chart's crds.manage); or run it with --manage-crds=false and apply \
                crds/paimonmysqlsync.yaml yourself";
    for crd in pms_crds::crds() {
        let name = crd.name_any();
        let found = api
            .get_opt(&name)
            .await
            .map_err(|e| format!("reading CRD {name}: {e}. {hint}"))?;
        if let Some(later) = found.as_ref().and_then(later_revision) {
            warn!(crd = %name, installed = later, ours = SCHEMA_REVISION,
                  "the installed CRD is of a later schema revision than this operator's: left as it is \
                   (an operator rolled back? its newer fields would be pruned); upgrade the operator");
            continue;
        }
        api.patch(&name, &params, &Patch::Apply(&crd))
            .await
            .map_err(|e| format!("applying CRD {name}: {e}. {hint}"))?;
        info!(crd = %name, revision = SCHEMA_REVISION, "CRD applied");
    }
    Ok(())
}

/// The revision of `installed` when it is later than this operator's.
fn later_revision(installed: &CustomResourceDefinition) -> Option<u32> {
    let revision = schema_revision(installed);
    (revision > SCHEMA_REVISION).then_some(revision)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crd_of_a_later_revision_is_never_applied_over() {
        let mut crd = pms_crds::crds().remove(0);
        assert_eq!(later_revision(&crd), None, "ours");
        crd.metadata.annotations = None;
        assert_eq!(later_revision(&crd), None, "an older, unstamped one");
        let later = (SCHEMA_REVISION + 1).to_string();
        crd.annotations_mut()
            .insert(pms_crds::SCHEMA_REVISION_ANNOTATION.into(), later);
        assert_eq!(later_revision(&crd), Some(SCHEMA_REVISION + 1));
    }
}

//! The operator keeps its own CustomResourceDefinitions current: at start (as the leader) it
//! server-side applies the CRDs of the version it is, so `helm upgrade` (which never touches a
//! chart's `crds/`) or a new image brings the new schema, while existing resources stay. The
//! chart's `crds/` still installs them the first time (the operator needs them to start).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Patch, PatchParams};
use kube::{Api, Client, ResourceExt};
use pms_crds::contract::MANAGER;
use tracing::info;

/// Applies the CRDs with the operator's field manager (forcing: it owns their schemas).
pub async fn apply_own_crds(client: &Client) -> Result<(), String> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let params = PatchParams::apply(MANAGER).force();
    for crd in pms_crds::crds() {
        let name = crd.name_any();
        api.patch(&name, &params, &Patch::Apply(&crd)).await.map_err(|e| {
            format!(
                "applying CRD {name}: {e}. The operator keeps its CRDs current and needs get/patch on \
                 customresourcedefinitions (the chart's crds.manage); or run it with --manage-crds=false \
                 and apply crds/paimonmysqlsync.yaml yourself"
            )
        })?;
        info!(crd = %name, "CRD applied");
    }
    Ok(())
}

//! The chart's values, rendered by the real `helm template` (no cluster): the settings real
//! clusters need reach the operator's pod, a misspelt value is refused by values.schema.json.

use std::process::Command;

use pms_tests::kube::tool;
use pms_tests::repo_root;
use serde_json::Value as Json;

/// `helm template` of the chart with `args`: its documents, or its error output.
fn render(args: &[&str]) -> Result<Vec<Json>, String> {
    let chart = repo_root().join("charts/paimon-mysql-sync");
    let out = Command::new(tool("helm"))
        .args([
            "template",
            "pms",
            chart.to_str().unwrap(),
            "--namespace",
            "pms-system",
        ])
        .args(args)
        .output()
        .expect("run helm (scripts/k8s-tools.sh builds it; make test sets PMS_K8S_BIN)");
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    Ok(text
        .split("\n---")
        .filter_map(|d| serde_yaml::from_str::<Json>(d).ok())
        .filter(|d| d.is_object())
        .collect())
}

fn kind<'a>(docs: &'a [Json], kind: &str) -> Vec<&'a Json> {
    docs.iter().filter(|d| d["kind"] == kind).collect()
}

#[test]
fn the_operator_pod_takes_the_settings_real_clusters_need() {
    let docs = render(&[
        "--set", "image.digest=sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        "--set", "workerDefaults.imagePullSecrets[0].name=regcred",
        "--set", "serviceAccount.annotations.eks\\.amazonaws\\.com/role-arn=arn:aws:iam::1:role/pms-operator",
        "--set", "env[0].name=HTTPS_PROXY", "--set", "env[0].value=http://proxy:3128",
        "--set", "extraVolumes[0].name=ca", "--set", "extraVolumes[0].configMap.name=corp-ca",
        "--set", "extraVolumeMounts[0].name=ca", "--set", "extraVolumeMounts[0].mountPath=/etc/corp-ca",
        "--set", "podLabels.team=data",
        "--set", "priorityClassName=platform",
        "--set", "topologySpreadConstraints[0].maxSkew=1",
        "--set", "topologySpreadConstraints[0].topologyKey=topology.kubernetes.io/zone",
        "--set", "topologySpreadConstraints[0].whenUnsatisfiable=ScheduleAnyway",
    ])
    .unwrap();
    let deployment = kind(&docs, "Deployment")[0];
    let pod = &deployment["spec"]["template"];
    let container = &pod["spec"]["containers"][0];
    assert_eq!(
        container["image"],
        "ghcr.io/paimon-mysql-sync/pms-operator@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
    );
    let env = container["env"].to_string();
    assert!(
        env.contains("PMS_WORKER_IMAGE_PULL_SECRETS") && env.contains("regcred"),
        "{env}"
    );
    assert!(env.contains("HTTPS_PROXY"), "{env}");
    assert!(
        env.contains("ghcr.io/paimon-mysql-sync/pms-worker:"),
        "the published worker image: {env}"
    );
    assert_eq!(container["volumeMounts"][0]["mountPath"], "/etc/corp-ca");
    assert_eq!(pod["spec"]["volumes"][0]["configMap"]["name"], "corp-ca");
    assert_eq!(pod["metadata"]["labels"]["team"], "data");
    assert_eq!(pod["spec"]["priorityClassName"], "platform");
    assert_eq!(pod["spec"]["topologySpreadConstraints"][0]["maxSkew"], 1);
    assert!(
        pod["spec"]["securityContext"].get("runAsUser").is_none(),
        "no fixed user (OpenShift's restricted profile assigns one): {}",
        pod["spec"]["securityContext"]
    );
    assert_eq!(pod["spec"]["securityContext"]["runAsNonRoot"], true);
    let account = kind(&docs, "ServiceAccount")[0];
    assert_eq!(
        account["metadata"]["annotations"]["eks.amazonaws.com/role-arn"],
        "arn:aws:iam::1:role/pms-operator"
    );
    assert!(!kind(&docs, "ClusterRole").is_empty(), "RBAC by default");
}

#[test]
fn rbac_create_false_leaves_rbac_to_the_platform_team() {
    let docs = render(&["--set", "rbac.create=false"]).unwrap();
    for k in ["ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"] {
        assert!(kind(&docs, k).is_empty(), "no {k}");
    }
    assert_eq!(kind(&docs, "Deployment").len(), 1);
}

#[test]
fn a_misspelt_or_mistyped_value_is_refused_by_the_values_schema() {
    let err = render(&["--set", "imagee.tag=1.0"]).unwrap_err();
    assert!(err.contains("imagee"), "names the unknown value: {err}");
    let err = render(&["--set", "image.pullPolicy=Sometimes"]).unwrap_err();
    assert!(err.contains("pullPolicy"), "{err}");
    let err = render(&["--set-string", "replicaCount=two"]).unwrap_err();
    assert!(err.contains("replicaCount"), "{err}");
}

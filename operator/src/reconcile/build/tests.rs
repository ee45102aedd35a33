//! The builders, object by object.

use super::*;

fn sample(parallelism: u32, state: &str) -> PaimonMysqlSync {
    let spec: pms_crds::PaimonMysqlSyncSpec = serde_yaml::from_str(&format!(
        "source: {{warehouse: 's3://lake/wh', database: shop, table: orders, s3: {{credentialsSecretRef: {{name: lake}}}}}}\n\
         sink: {{url: 'mysql://db:3306/serving', table: orders_rt, credentialsSecretRef: {{name: writer}}}}\n\
         parallelism: {parallelism}\nstate: {state}\n"
    ))
    .unwrap();
    let mut pms = PaimonMysqlSync::new("orders", spec);
    pms.metadata.namespace = Some("data".into());
    pms.metadata.uid = Some("uid-1".into());
    pms
}

/// The worker container's mounts: volume name → mount path.
fn mount_paths(d: &Deployment) -> BTreeMap<String, String> {
    worker_container(d)
        .volume_mounts
        .iter()
        .flatten()
        .map(|m| (m.name.clone(), m.mount_path.clone()))
        .collect()
}

/// The worker container of a slot Deployment.
fn worker_container(d: &Deployment) -> &Container {
    &d.spec
        .as_ref()
        .unwrap()
        .template
        .spec
        .as_ref()
        .unwrap()
        .containers[0]
}

fn env_of(d: &Deployment) -> BTreeMap<String, EnvVar> {
    let c = worker_container(d);
    c.env
        .clone()
        .unwrap()
        .into_iter()
        .map(|e| (e.name.clone(), e))
        .collect()
}

#[test]
fn one_deployment_per_slot_with_slot_env_secrets_by_reference_and_recreate() {
    let pms = sample(3, "running");
    let d = deployment(&pms, 2, "abc", false, &Settings::default());
    assert_eq!(d.metadata.name.as_deref(), Some("orders-slot-2"));
    let spec = d.spec.as_ref().unwrap();
    assert_eq!(spec.replicas, Some(1));
    assert_eq!(
        spec.strategy.as_ref().unwrap().type_.as_deref(),
        Some("Recreate")
    );
    let env = env_of(&d);
    assert_eq!(env["PMS_SLOT"].value.as_deref(), Some("2"));
    // The slot count is the config's parallelism (one source), not an env var.
    assert!(!env.contains_key("PMS_SLOTS"));
    let pw = env["MYSQL_PASSWORD"]
        .value_from
        .as_ref()
        .unwrap()
        .secret_key_ref
        .as_ref()
        .unwrap();
    assert_eq!((pw.name.as_str(), pw.key.as_str()), ("writer", "password"));
    assert!(
        env["MYSQL_PASSWORD"].value.is_none(),
        "secrets are referenced, never copied"
    );
    assert!(env.contains_key("AWS_SECRET_ACCESS_KEY"));
    let owner = &d.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.controller),
        ("PaimonMysqlSync", Some(true))
    );
    let sc = worker_container(&d).security_context.as_ref().unwrap();
    assert_eq!(
        (sc.allow_privilege_escalation, sc.run_as_non_root),
        (Some(false), Some(true))
    );
}

#[test]
fn suspended_means_zero_replicas() {
    let d = deployment(
        &sample(1, "suspended"),
        0,
        "abc",
        false,
        &Settings::default(),
    );
    assert_eq!(d.spec.unwrap().replicas, Some(0));
}

#[test]
fn worker_config_is_the_spec_with_configmap_checkpoints_and_no_secrets() {
    let cm = worker_config(&sample(2, "running")).unwrap();
    let yaml = &cm.data.as_ref().unwrap()[CONFIG_KEY];
    let back: pms_crds::PaimonMysqlSyncSpec = serde_yaml::from_str(yaml).unwrap();
    assert_eq!(back.checkpoint.storage, Some(CheckpointStorage::Configmap));
    assert_eq!(back.sink.table, "orders_rt");
    assert_ne!(
        config_hash(&cm),
        config_hash(&worker_config(&sample(3, "running")).unwrap())
    );
    // What only the operator acts on restarts no worker.
    let mut other = sample(2, "suspended");
    other.spec.rebuild.trigger = Some("t".into());
    other.spec.upgrade_mode = pms_crds::UpgradeMode::Savepoint;
    assert_eq!(
        config_hash(&cm),
        config_hash(&worker_config(&other).unwrap())
    );
}

#[test]
fn role_names_only_this_syncs_configmaps() {
    let r = role(&sample(2, "running"), 3);
    let rules = r.rules.unwrap();
    assert_eq!(
        rules[0].resource_names.as_deref().unwrap(),
        [
            "orders-checkpoint-0",
            "orders-checkpoint-1",
            "orders-checkpoint-2",
            "orders-rebuild-checkpoint-0",
            "orders-rebuild-checkpoint-1",
            "orders-rebuild-checkpoint-2",
            "orders-rebuild",
            "orders-restore",
            "orders-verify",
            "orders-preflight",
            "orders-config",
            "orders-control"
        ]
    );
    assert!(rules
        .iter()
        .all(|r| r.resources.as_deref() == Some(&["configmaps".to_string()][..])));
    // Every rule names its ConfigMaps: no list, no create (RBAC can't limit it by name), no
    // delete.
    assert!(rules.iter().all(|r| r.resource_names.is_some()));
    let verbs: std::collections::BTreeSet<&str> = rules
        .iter()
        .flat_map(|r| r.verbs.iter().map(String::as_str))
        .collect();
    assert_eq!(verbs, ["get", "patch", "update"].into());
}

#[test]
fn a_rebuilds_checkpoint_configmaps_are_made_before_its_job() {
    let made = rebuild_checkpoint_config_maps(&sample(2, "running"));
    let names: Vec<String> = made.iter().map(|cm| cm.name_any()).collect();
    assert_eq!(
        names,
        ["orders-rebuild-checkpoint-0", "orders-rebuild-checkpoint-1"]
    );
    // Labelled as the worker labels them (the finalizer deletes them by that label), empty,
    // unowned as the slots' are.
    let labels = made[1].metadata.labels.clone().unwrap();
    assert_eq!(
        labels,
        contract::labels("orders-rebuild", Component::Checkpoint, Some(1))
    );
    assert!(made
        .iter()
        .all(|cm| cm.data.is_none() && cm.metadata.owner_references.is_none()));
}

#[test]
fn all_builds_every_object_of_one_sync() {
    let pms = sample(2, "running");
    let v = Validated {
        pms: &pms,
        name: "orders".into(),
        namespace: "data".into(),
        slots_known: 3,
    };
    let d = all(
        &v,
        &JobPlan::default(),
        &Control::default(),
        &Settings::default(),
    )
    .unwrap();
    let names = [
        d.service_account.name_any(),
        d.role.name_any(),
        d.role_binding.name_any(),
        d.config.name_any(),
        d.metrics_service.name_any(),
    ];
    assert_eq!(
        names,
        [
            "orders-worker",
            "orders-worker",
            "orders-worker",
            "orders-config",
            "orders-metrics"
        ]
    );
    let slots: Vec<String> = d.deployments.iter().map(|d| d.name_any()).collect();
    assert_eq!(slots, ["orders-slot-0", "orders-slot-1"]);
    // The Role still names the checkpoint of slot 2 of an earlier parallelism of 3.
    let readable = d.role.rules.as_ref().unwrap()[0]
        .resource_names
        .clone()
        .unwrap();
    assert!(readable.contains(&"orders-checkpoint-2".to_string()));
    // The pods of one config carry its hash: a changed spec restarts them.
    let hash = config_hash(&d.config);
    let annotations = d.deployments[1]
        .spec
        .as_ref()
        .unwrap()
        .template
        .metadata
        .as_ref();
    assert_eq!(
        annotations.unwrap().annotations.as_ref().unwrap()["paimonsync.io/config-hash"],
        hash
    );
}

#[test]
fn the_worker_env_is_the_contracts_in_a_stable_order() {
    let d = deployment(&sample(2, "running"), 0, "abc", false, &Settings::default());
    let c = worker_container(&d);
    let names: Vec<&str> = c
        .env
        .as_ref()
        .unwrap()
        .iter()
        .map(|e| e.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "PMS_SLOT",
            "PMS_SYNC_NAME",
            "PMS_CONFIG",
            "PMS_ADMIN_ADDR",
            "PMS_LOG_JSON",
            "PMS_NAMESPACE",
            "MYSQL_USER",
            "MYSQL_PASSWORD",
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY"
        ]
    );
    let labels = d.metadata.labels.as_ref().unwrap();
    assert_eq!(labels["paimonsync.io/component"], "worker");
    assert_eq!(labels["paimonsync.io/slot"], "0");
    assert_eq!(labels["app.kubernetes.io/managed-by"], "pms-operator");
}

#[test]
fn tls_secrets_are_mounted_and_the_worker_config_names_their_files() {
    let mut pms = sample(1, "running");
    pms.spec.sink.tls = serde_yaml::from_str(
        "{mode: verify-identity, caSecretRef: {name: mysql-ca, key: root.pem}, clientCertSecretRef: {name: writer-cert}}",
    )
    .unwrap();
    let config = worker_config(&pms).unwrap();
    let yaml = &config.data.as_ref().unwrap()[CONFIG_KEY];
    let spec: pms_crds::PaimonMysqlSyncSpec = serde_yaml::from_str(yaml).unwrap();
    let tls = spec.sink.tls;
    assert_eq!(tls.ca_file.as_deref(), Some("/etc/pms-mysql-tls/ca/ca.crt"));
    assert_eq!(
        tls.client_cert_file.as_deref(),
        Some("/etc/pms-mysql-tls/client/tls.crt")
    );
    assert_eq!(
        tls.client_key_file.as_deref(),
        Some("/etc/pms-mysql-tls/client/tls.key")
    );
    assert!(tls.ca_secret_ref.is_none() && tls.client_cert_secret_ref.is_none());

    let d = deployment(&pms, 0, "abc", false, &Settings::default());
    let pod = d.spec.as_ref().unwrap().template.spec.as_ref().unwrap();
    let volumes = pod.volumes.as_ref().unwrap();
    let ca = volumes.iter().find(|v| v.name == "mysql-tls-ca").unwrap();
    let ca = ca.secret.as_ref().unwrap();
    assert_eq!(ca.secret_name.as_deref(), Some("mysql-ca"));
    let item = &ca.items.as_ref().unwrap()[0];
    assert_eq!(
        (item.key.as_str(), item.path.as_str()),
        ("root.pem", "ca.crt")
    );
    let mounts = mount_paths(&d);
    assert_eq!(mounts["mysql-tls-ca"], "/etc/pms-mysql-tls/ca");
    assert_eq!(mounts["mysql-tls-client"], "/etc/pms-mysql-tls/client");
    assert_eq!(mounts["config"], "/etc/pms");
}

#[test]
fn a_rebuild_stops_the_slots_and_runs_one_job_with_the_workers_pod() {
    let pms = sample(2, "running");
    let v = Validated {
        pms: &pms,
        name: "orders".into(),
        namespace: "data".into(),
        slots_known: 2,
    };
    let plan = JobPlan {
        workers_stopped: true,
        rebuild_job: Some("2026-11-30T10:00:00Z".into()),
        ..Default::default()
    };
    let d = all(&v, &plan, &Control::default(), &Settings::default()).unwrap();
    assert!(d
        .deployments
        .iter()
        .all(|d| d.spec.as_ref().unwrap().replicas == Some(0)));
    assert_eq!(d.jobs.len(), 1);
    let job = &d.jobs[0];
    assert_eq!(job.name_any(), "orders-rebuild");
    assert_eq!(job.annotations()[JOB_ID], "2026-11-30T10:00:00Z");
    let spec = job.spec.as_ref().unwrap();
    assert_eq!(spec.backoff_limit, Some(0));
    let pod = spec.template.spec.as_ref().unwrap();
    assert_eq!(pod.restart_policy.as_deref(), Some("Never"));
    assert_eq!(pod.service_account_name.as_deref(), Some("orders-worker"));
    let c = &pod.containers[0];
    assert_eq!(
        c.args.as_deref().unwrap(),
        ["rebuild", "--trigger", "2026-11-30T10:00:00Z"]
    );
    assert!(c.readiness_probe.is_none());
    assert!(!c
        .env
        .as_ref()
        .unwrap()
        .iter()
        .any(|e| e.name == ENV_ADMIN_ADDR));
    let names: Vec<String> = d.reports.iter().map(|c| c.name_any()).collect();
    assert_eq!(
        names,
        [
            "orders-rebuild",
            "orders-restore",
            "orders-verify",
            "orders-preflight"
        ]
    );
    // The Job's identity may write the new generation's checkpoints and the reports.
    let role = serde_json::to_string(&d.role).unwrap();
    for name in [
        "orders-rebuild-checkpoint-1",
        "orders-rebuild",
        "orders-verify",
    ] {
        assert!(role.contains(&format!("\"{name}\"")), "{role}");
    }
}

#[test]
fn the_restart_key_covers_the_pod_template_and_is_the_same_in_every_build() {
    let pms = sample(2, "running");
    let settings = Settings::default();
    let key = restart_key(&pms, &settings).unwrap();
    assert!(key.starts_with(RESTART_KEY_PREFIX), "{key}");
    assert_eq!(key, restart_key(&pms, &settings).unwrap());
    // An operator upgrade that only changes the pod template (here its image) is a restart.
    let newer = Settings {
        worker_image: "paimon-mysql-sync/pms-worker:0.2.0".into(),
        ..Settings::default()
    };
    assert_ne!(key, restart_key(&pms, &newer).unwrap());
    let mut resources = pms.clone();
    resources.spec.worker_pod =
        serde_yaml::from_str("{resources: {limits: {memory: 1Gi}}}").unwrap();
    assert_ne!(key, restart_key(&resources, &settings).unwrap());
    // A sync pinned to its image is not restarted by an operator upgrade.
    let mut pinned = pms.clone();
    pinned.spec.worker_pod = serde_yaml::from_str("{image: 'pms-worker:pinned'}").unwrap();
    let pinned_key = restart_key(&pinned, &settings).unwrap();
    assert_eq!(pinned_key, restart_key(&pinned, &newer).unwrap());
    let d = deployment(&pinned, 0, "h", false, &newer);
    assert_eq!(
        worker_container(&d).image.as_deref(),
        Some("pms-worker:pinned")
    );
    // SHA-256, not `DefaultHasher`: the same digits in every build and toolchain.
    assert_eq!(sha256_hex(&["abc"]), "dc1114cd074914bd");
}

#[test]
fn worker_pod_stall_after_sets_the_liveness_threshold() {
    let mut pms = sample(1, "running");
    let env_of = |pms: &PaimonMysqlSync| {
        let d = deployment(pms, 0, "h", false, &Settings::default());
        worker_container(&d)
            .env
            .clone()
            .unwrap_or_default()
            .into_iter()
            .find(|e| e.name == "PMS_STALL_AFTER")
            .and_then(|e| e.value)
    };
    assert_eq!(env_of(&pms), None, "the worker's default");
    pms.spec.worker_pod = serde_yaml::from_str("{stallAfter: 30m}").unwrap();
    assert_eq!(env_of(&pms).as_deref(), Some("1800"));
}

#[test]
fn a_restart_nonce_rolls_the_pods_without_changing_what_they_run() {
    let pms = sample(1, "running");
    let mut again = pms.clone();
    again.spec.restart_nonce = Some("2026-12-02".into());
    let settings = Settings::default();
    let annotations = |pms: &PaimonMysqlSync| {
        deployment(pms, 0, "h", false, &settings)
            .spec
            .unwrap()
            .template
            .metadata
            .unwrap()
            .annotations
            .unwrap_or_default()
    };
    assert_eq!(
        annotations(&again)
            .get("paimonsync.io/restart-nonce")
            .map(String::as_str),
        Some("2026-12-02"),
        "the pod template changes: the pods roll"
    );
    assert_eq!(
        worker_config(&pms).unwrap().data,
        worker_config(&again).unwrap().data,
        "kept out of the worker config"
    );
    assert_eq!(
        restart_key(&pms, &settings).unwrap(),
        restart_key(&again, &settings).unwrap(),
        "a plain restart, not an upgrade through upgradeMode"
    );
}

#[test]
fn the_missing_checkpoint_configmaps_of_the_current_slots_are_made_unowned() {
    let pms = sample(3, "running");
    let made = missing_slot_config_maps(&pms, &BTreeSet::from([1]));
    let names: Vec<String> = made.iter().map(|cm| cm.name_any()).collect();
    assert_eq!(names, ["orders-checkpoint-0", "orders-checkpoint-2"]);
    for cm in &made {
        assert!(cm.metadata.owner_references.is_none() && cm.data.is_none());
        assert_eq!(cm.labels()[contract::COMPONENT_LABEL], "checkpoint");
    }
    // On S3 too: they hold the workers' notes.
    let mut on_s3 = pms.clone();
    on_s3.spec.checkpoint.storage = Some(CheckpointStorage::S3);
    assert_eq!(missing_slot_config_maps(&on_s3, &BTreeSet::new()).len(), 3);
}

#[test]
fn hadoop_conf_and_kerberos_are_mounted_where_the_worker_env_names_them() {
    let mut pms = sample(1, "running");
    pms.spec.source = serde_yaml::from_str(
        "{warehouse: 'hdfs://warehouse-ns/wh', database: shop, table: orders, hadoopConf: {name: hadoop-site},\n\
          kerberos: {principal: pms@CORP.EXAMPLE, keytabSecretRef: {name: pms-keytab, key: pms.keytab},\n\
                     krb5ConfConfigMapRef: {name: krb5}}}",
    )
    .unwrap();
    let d = deployment(&pms, 0, "abc", false, &Settings::default());
    let env = env_of(&d);
    let value = |k: &str| env[k].value.clone().unwrap();
    assert_eq!(value("HADOOP_CONF_DIR"), "/etc/pms-hadoop/conf");
    assert_eq!(
        value("KRB5_CLIENT_KTNAME"),
        "/etc/pms-kerberos/keytab/keytab"
    );
    assert_eq!(value("KRB5_CONFIG"), "/etc/pms-kerberos/conf/krb5.conf");
    assert!(
        value("KRB5CCNAME").starts_with("MEMORY:"),
        "the root file system is read-only"
    );
    let pod = d.spec.as_ref().unwrap().template.spec.as_ref().unwrap();
    let volume = |name: &str| {
        pod.volumes
            .iter()
            .flatten()
            .find(|v| v.name == name)
            .unwrap()
            .clone()
    };
    assert_eq!(
        volume("hadoop-conf").config_map.unwrap().name,
        "hadoop-site"
    );
    let keytab = volume("kerberos-keytab").secret.unwrap();
    assert_eq!(keytab.secret_name.as_deref(), Some("pms-keytab"));
    let item = &keytab.items.unwrap()[0];
    assert_eq!(
        (item.key.as_str(), item.path.as_str()),
        ("pms.keytab", "keytab")
    );
    let krb5 = volume("krb5-conf").config_map.unwrap();
    assert_eq!(krb5.name, "krb5");
    assert_eq!(krb5.items.unwrap()[0].key, "krb5.conf", "the default key");
    let mounts = mount_paths(&d);
    assert_eq!(mounts["hadoop-conf"], "/etc/pms-hadoop/conf");
    assert_eq!(mounts["kerberos-keytab"], "/etc/pms-kerberos/keytab");
    assert_eq!(mounts["krb5-conf"], "/etc/pms-kerberos/conf");
}

#[test]
fn worker_pod_env_spread_and_service_account_reach_the_pods_and_the_role_binding() {
    let mut pms = sample(1, "running");
    pms.spec.worker_pod = Some(
        serde_yaml::from_str(
            "{env: [{name: RUST_LOG, value: debug}], envFrom: [{configMapRef: {name: proxies}}],\n\
              topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway}],\n\
              serviceAccountAnnotations: {eks.amazonaws.com/role-arn: 'arn:aws:iam::1:role/pms'}}",
        )
        .unwrap(),
    );
    let d = deployment(&pms, 0, "abc", false, &Settings::default());
    assert_eq!(env_of(&d)["RUST_LOG"].value.as_deref(), Some("debug"));
    let c = worker_container(&d);
    assert_eq!(
        c.env_from.as_ref().unwrap()[0]
            .config_map_ref
            .as_ref()
            .unwrap()
            .name,
        "proxies"
    );
    let pod = d.spec.as_ref().unwrap().template.spec.as_ref().unwrap();
    assert_eq!(
        pod.topology_spread_constraints.as_ref().unwrap()[0].max_skew,
        1
    );
    assert_eq!(pod.service_account_name.as_deref(), Some("orders-worker"));
    assert!(
        pod.security_context.as_ref().unwrap().run_as_user.is_none(),
        "no fixed user: OpenShift's restricted profile assigns one"
    );
    let sa = service_account(&pms);
    assert_eq!(
        sa.metadata.annotations.unwrap()["eks.amazonaws.com/role-arn"],
        "arn:aws:iam::1:role/pms"
    );
    // A ServiceAccount of the user's: the pods run as it, and the Role is bound to it.
    pms.spec.worker_pod.as_mut().unwrap().service_account_name = Some("irsa-pms".into());
    let d = deployment(&pms, 0, "abc", false, &Settings::default());
    let pod = d.spec.as_ref().unwrap().template.spec.as_ref().unwrap();
    assert_eq!(pod.service_account_name.as_deref(), Some("irsa-pms"));
    let binding = role_binding(&pms);
    assert_eq!(binding.subjects.unwrap()[0].name, "irsa-pms");
    assert_eq!(binding.role_ref.name, "orders-worker");
}

#[test]
fn worker_pod_env_may_not_redefine_the_operators_variables() {
    let mut pms = sample(1, "running");
    pms.spec.worker_pod = Some(
        serde_yaml::from_str(
            "{env: [{name: PMS_SLOT, value: '7'}, {name: RUST_LOG, value: debug}]}",
        )
        .unwrap(),
    );
    assert_eq!(
        worker_pod_clashes(&pms),
        vec![
            "workerPod.env: PMS_SLOT is set by the operator (from the sync's spec); set it there"
                .to_string()
        ]
    );
}

#[test]
fn the_operators_default_pull_secrets_apply_unless_the_sync_names_its_own() {
    let mut pms = sample(1, "running");
    let settings = Settings {
        worker_image_pull_secrets: vec!["regcred".into()],
        ..Settings::default()
    };
    let pull = |pms: &PaimonMysqlSync| -> Vec<String> {
        let d = deployment(pms, 0, "abc", false, &settings);
        let pod = d.spec.unwrap().template.spec.unwrap();
        pod.image_pull_secrets
            .unwrap()
            .into_iter()
            .map(|r| r.name)
            .collect()
    };
    assert_eq!(pull(&pms), ["regcred"]);
    pms.spec.worker_pod = Some(serde_yaml::from_str("{imagePullSecrets: [{name: own}]}").unwrap());
    assert_eq!(pull(&pms), ["own"]);
}

//! Step 2 (pure): the checks the CRD schema can't make, on the resource and what step 1
//! fetched. Every problem is reported at once, so one edit can fix them all.

use kube::ResourceExt;
use pms_crds::contract::{
    CHECKPOINT_S3_SECRET_KEYS, KERBEROS_KEYTAB_FILE, MYSQL_SECRET_KEYS, S3_SECRET_KEYS,
    TLS_SECRET_KEYS,
};
use pms_crds::CheckpointStorage;
use pms_crds::PaimonMysqlSync;

use super::build::{worker_pod_clashes, Validated};
use super::dereference::{Dereferenced, SecretKeys};

/// Everything wrong with a resource, for the status and a Warning event.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.join("; "))]
pub struct Invalid(pub Vec<String>);

pub fn validate<'a>(
    pms: &'a PaimonMysqlSync,
    namespace: &str,
    found: &Dereferenced,
) -> Result<Validated<'a>, Invalid> {
    let mut problems = Vec::new();
    let key_names = |keys: &[(&str, &str)]| keys.iter().map(|(k, _env)| k.to_string()).collect();
    let tls = &pms.spec.sink.tls;
    let keytab = pms
        .spec
        .source
        .kerberos
        .as_ref()
        .and_then(|k| k.keytab_secret_ref.as_ref());
    let secrets: [(&str, &Option<SecretKeys>, Vec<String>); 6] = [
        (
            "sink.credentialsSecretRef",
            &found.mysql_secret,
            key_names(&MYSQL_SECRET_KEYS),
        ),
        (
            "source.s3.credentialsSecretRef",
            &found.s3_secret,
            key_names(&S3_SECRET_KEYS),
        ),
        (
            "checkpoint.s3.credentialsSecretRef",
            &found.checkpoint_s3_secret,
            key_names(&CHECKPOINT_S3_SECRET_KEYS),
        ),
        (
            "sink.tls.caSecretRef",
            &found.tls_ca_secret,
            tls.ca_secret_ref.iter().map(|r| r.key.clone()).collect(),
        ),
        (
            "sink.tls.clientCertSecretRef",
            &found.tls_client_secret,
            TLS_SECRET_KEYS.map(String::from).to_vec(),
        ),
        (
            "source.kerberos.keytabSecretRef",
            &found.keytab_secret,
            keytab
                .map(|r| r.key.clone().unwrap_or_else(|| KERBEROS_KEYTAB_FILE.into()))
                .into_iter()
                .collect(),
        ),
    ];
    for (field, secret, keys) in secrets {
        if let Some(secret) = secret {
            problems.extend(secret_problem(field, namespace, secret, &keys));
        }
    }
    problems.extend(spec_problems(pms));
    if !problems.is_empty() {
        return Err(Invalid(problems));
    }
    Ok(Validated {
        pms,
        name: pms.name_any(),
        namespace: namespace.to_string(),
        slots_known: slots_known(pms, found),
    })
}

/// What is wrong with the spec itself, whatever the cluster holds: also checked on the
/// template of a pooled database sync, whose workers are built from it without a sync.
pub fn spec_problems(pms: &PaimonMysqlSync) -> Vec<String> {
    let mut problems = worker_pod_clashes(pms);
    if url_has_password(&pms.spec.sink.url) {
        problems.push(
            "sink.url carries a password, which would be copied into the sync's ConfigMap for anyone who can read \
             ConfigMaps: put it in the Secret of sink.credentialsSecretRef (key password) and leave only user@ (or \
             nothing) in the URL"
                .to_string(),
        );
    }
    if let Some(kerberos) = &pms.spec.source.kerberos {
        for (missing, field) in [
            (
                kerberos.keytab_secret_ref.is_none(),
                "keytabSecretRef (the Secret holding its keytab)",
            ),
            (
                kerberos.krb5_conf_config_map_ref.is_none(),
                "krb5ConfConfigMapRef (the ConfigMap holding krb5.conf)",
            ),
        ] {
            if missing {
                problems.push(format!(
                    "source.kerberos: a worker pod logs in to Kerberos only with {field}; set it"
                ));
            }
        }
    }
    if pms.spec.checkpoint.storage == Some(CheckpointStorage::File) {
        problems.push(
            "checkpoint.storage file: a pod's files go with the pod, and the operator reads the checkpoints for \
             status, savepoints and rescales; use configmap (the default) or s3"
                .to_string(),
        );
    }
    problems
}

fn secret_problem(
    field: &str,
    namespace: &str,
    secret: &SecretKeys,
    wanted: &[String],
) -> Option<String> {
    let name = &secret.name;
    let Some(present) = &secret.keys else {
        return Some(format!("{field}: Secret {namespace}/{name} does not exist"));
    };
    let missing: Vec<&str> = wanted
        .iter()
        .filter(|k| !present.contains(*k))
        .map(String::as_str)
        .collect();
    (!missing.is_empty())
        .then(|| format!("{field}: Secret {name} has no key {}", missing.join(", ")))
}

/// Whether `mysql://user:password@…` has a (non-empty) password. The CRD refuses it too; this
/// holds for resources stored before that rule.
pub(crate) fn url_has_password(url: &str) -> bool {
    let rest = url.strip_prefix("mysql://").unwrap_or(url);
    let authority = rest.split('/').next().unwrap_or_default();
    authority.rsplit_once('@').is_some_and(|(user_info, _)| {
        user_info
            .split_once(':')
            .is_some_and(|(_, p)| !p.is_empty())
    })
}

/// max(parallelism, slots in the last status, slot count of any checkpoint).
fn slots_known(pms: &PaimonMysqlSync, found: &Dereferenced) -> u32 {
    let in_status = pms.status.as_ref().map_or(0, |s| s.slots.len() as u32);
    let in_checkpoints = found
        .checkpoints
        .values()
        .map(|c| c.slot.count)
        .max()
        .unwrap_or(0);
    pms.spec.parallelism.max(in_status).max(in_checkpoints)
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use pms_crds::contract::{Checkpoint, Position, ReadPoint, Slot};

    use super::*;

    fn sample() -> PaimonMysqlSync {
        let spec = serde_yaml::from_str(
            "source: {warehouse: 's3://lake/wh', database: d, table: t, s3: {credentialsSecretRef: {name: lake}}}\n\
             sink: {url: 'mysql://h/db', table: t, credentialsSecretRef: {name: writer}}\nparallelism: 2\n",
        )
        .unwrap();
        PaimonMysqlSync::new("s", spec)
    }

    fn keys(name: &str, keys: Option<&[&str]>) -> Option<SecretKeys> {
        Some(SecretKeys {
            name: name.into(),
            keys: keys.map(|k| k.iter().map(|k| k.to_string()).collect::<BTreeSet<_>>()),
        })
    }

    #[test]
    fn kerberos_under_the_operator_needs_its_keytab_secret_with_the_key_and_its_krb5_conf() {
        let mut pms = sample();
        pms.spec.source =
            serde_yaml::from_str("{warehouse: 'hdfs://ns/wh', database: d, table: t, kerberos: {principal: pms@EXAMPLE.COM}}")
                .unwrap();
        let found = Dereferenced {
            mysql_secret: keys("writer", Some(&["username", "password"])),
            ..Default::default()
        };
        let err = validate(&pms, "data", &found).unwrap_err().to_string();
        assert!(
            err.contains(
                "source.kerberos: a worker pod logs in to Kerberos only with keytabSecretRef"
            ),
            "{err}"
        );
        assert!(err.contains("krb5ConfConfigMapRef"), "{err}");
        pms.spec.source.kerberos = serde_yaml::from_str(
            "{principal: pms@EXAMPLE.COM, keytabSecretRef: {name: kt}, krb5ConfConfigMapRef: {name: krb5}}",
        )
        .unwrap();
        let found = Dereferenced {
            keytab_secret: keys("kt", Some(&["pms.keytab"])),
            ..found
        };
        assert_eq!(
            validate(&pms, "data", &found).unwrap_err().to_string(),
            "source.kerberos.keytabSecretRef: Secret kt has no key keytab"
        );
    }

    #[test]
    fn validate_reports_every_missing_secret_and_key() {
        let found = Dereferenced {
            mysql_secret: keys("writer", Some(&["username"])),
            s3_secret: keys("lake", None),
            ..Default::default()
        };
        let Err(Invalid(problems)) = validate(&sample(), "data", &found) else {
            panic!("invalid")
        };
        assert_eq!(
            problems,
            [
                "sink.credentialsSecretRef: Secret writer has no key password",
                "source.s3.credentialsSecretRef: Secret data/lake does not exist",
            ]
        );
        let found = Dereferenced {
            mysql_secret: keys("writer", Some(&[])),
            s3_secret: keys("lake", Some(&["accessKeyId", "secretAccessKey"])),
            ..Default::default()
        };
        let err = validate(&sample(), "data", &found).unwrap_err();
        assert_eq!(
            err.to_string(),
            "sink.credentialsSecretRef: Secret writer has no key username, password"
        );
    }

    #[test]
    fn a_password_in_the_url_is_refused_and_never_reaches_the_config_map() {
        for (url, refused) in [
            ("mysql://app:s3cret@db:3306/serving", true),
            ("mysql://app:p%40ss@[::1]:3306/serving", true),
            ("mysql://app@db/serving", false),
            ("mysql://app:@db/serving", false),
            ("mysql://db/serving", false),
        ] {
            let mut pms = sample();
            pms.spec.sink.url = url.into();
            let found = Dereferenced {
                mysql_secret: keys("writer", Some(&["username", "password"])),
                s3_secret: keys("lake", Some(&["accessKeyId", "secretAccessKey"])),
                ..Default::default()
            };
            let result = validate(&pms, "data", &found);
            assert_eq!(result.is_err(), refused, "{url}");
            if let Err(e) = result {
                assert!(e.to_string().contains("sink.url carries a password"), "{e}");
                assert!(
                    !e.to_string().contains("s3cret"),
                    "the password is not told: {e}"
                );
            }
        }
    }

    #[test]
    fn slots_known_covers_a_previous_larger_parallelism() {
        let cp = |slot: Slot| Checkpoint {
            sync: "s".into(),
            slot,
            point: ReadPoint::Changes {
                next_snapshot: 3,
                at: Position::START,
            },
            epoch: 1,
            updated: String::new(),
            latest_snapshot: None,
            rescaled_from: None,
            paused_for: None,
            belongs_to: None,
            sweep: false,
            full_read: None,
        };
        let found = Dereferenced {
            mysql_secret: keys("writer", Some(&["username", "password"])),
            s3_secret: keys("lake", Some(&["accessKeyId", "secretAccessKey"])),
            checkpoints: BTreeMap::from([(
                "s-checkpoint-4".to_string(),
                cp(Slot::new(4, 5).unwrap()),
            )]),
            ..Default::default()
        };
        let pms = sample();
        let ok = validate(&pms, "data", &found).unwrap();
        assert_eq!((ok.slots_known, ok.name.as_str()), (5, "s"));
        let ok = validate(
            &pms,
            "data",
            &Dereferenced {
                checkpoints: BTreeMap::new(),
                ..found
            },
        )
        .unwrap();
        assert_eq!(ok.slots_known, 2);
    }

    #[test]
    fn tls_secrets_need_their_keys() {
        let mut pms = sample();
        pms.spec.sink.tls = serde_yaml::from_str(
            "{mode: verify-ca, caSecretRef: {name: ca}, clientCertSecretRef: {name: client}}",
        )
        .unwrap();
        let found = Dereferenced {
            mysql_secret: keys("writer", Some(&["username", "password"])),
            s3_secret: keys("lake", Some(&["accessKeyId", "secretAccessKey"])),
            tls_ca_secret: keys("ca", Some(&["root.pem"])),
            tls_client_secret: keys("client", Some(&["tls.crt"])),
            ..Default::default()
        };
        let err = validate(&pms, "data", &found).unwrap_err();
        assert_eq!(
            err.to_string(),
            "sink.tls.caSecretRef: Secret ca has no key ca.crt; \
             sink.tls.clientCertSecretRef: Secret client has no key tls.key"
        );
    }

    #[test]
    fn checkpoints_go_to_configmaps_or_s3_with_its_secret_never_to_a_pod_file() {
        let mut pms = sample();
        pms.spec.checkpoint = serde_yaml::from_str(
            "{storage: s3, s3: {bucket: b, credentialsSecretRef: {name: state}}}",
        )
        .unwrap();
        let found = Dereferenced {
            mysql_secret: keys("writer", Some(&["username", "password"])),
            s3_secret: keys("lake", Some(&["accessKeyId", "secretAccessKey"])),
            checkpoint_s3_secret: keys("state", Some(&["accessKeyId"])),
            ..Default::default()
        };
        let err = validate(&pms, "data", &found).unwrap_err();
        assert_eq!(
            err.to_string(),
            "checkpoint.s3.credentialsSecretRef: Secret state has no key secretAccessKey"
        );
        let found = Dereferenced {
            checkpoint_s3_secret: keys("state", Some(&["accessKeyId", "secretAccessKey"])),
            ..found
        };
        assert!(validate(&pms, "data", &found).is_ok());
        pms.spec.checkpoint = serde_yaml::from_str("{storage: file}").unwrap();
        let err = validate(&pms, "data", &found).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("checkpoint.storage file: a pod's files go with the pod"),
            "{err}"
        );
    }

    #[test]
    fn worker_pod_settings_never_redefine_the_operators_own() {
        let mut pms = sample();
        pms.spec.worker_pod = serde_yaml::from_str(
            "{volumes: [{name: config, emptyDir: {}}, {name: wh, emptyDir: {}}], \
              volumeMounts: [{name: wh, mountPath: /etc/pms}], \
              labels: {paimonsync.io/sync: other, team: a}, annotations: {paimonsync.io/config-hash: x}}",
        )
        .unwrap();
        let found = Dereferenced {
            mysql_secret: keys("writer", Some(&["username", "password"])),
            s3_secret: keys("lake", Some(&["accessKeyId", "secretAccessKey"])),
            ..Default::default()
        };
        let Err(Invalid(problems)) = validate(&pms, "data", &found) else {
            panic!("invalid")
        };
        assert_eq!(
            problems,
            [
                "workerPod.volumes: config is the operator's own volume; rename it",
                "workerPod.volumeMounts: /etc/pms is where the operator mounts its own; mount elsewhere",
                "workerPod.labels: paimonsync.io/sync is set by the operator",
                "workerPod.annotations: paimonsync.io/config-hash is set by the operator",
            ]
        );
    }
}

//! Prints the CRD YAML generated from the Rust types (`make crds` writes it to `crds/`).
use kube::CustomResourceExt;

fn main() -> Result<(), serde_yaml::Error> {
    print!("{}", serde_yaml::to_string(&pms_crds::PaimonMysqlSync::crd())?);
    Ok(())
}

//! Prints the CRD YAML generated from the Rust types (`make crds` writes it to `crds/` and the
//! chart); `crdgen reference` prints the guide's field reference (`docs/reference.md`).
fn main() {
    match std::env::args().nth(1).as_deref() {
        Some("reference") => print!("{}", pms_crds::reference_markdown()),
        _ => print!("{}", pms_crds::crd_yaml()),
    }
}

//! Prints the CRD YAML generated from the Rust types (`make crds` writes it to `crds/` and the chart).
fn main() {
    print!("{}", pms_crds::crd_yaml());
}

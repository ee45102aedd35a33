#!/usr/bin/env bash
# Builds the worker and operator images as OCI archives, without a container engine: release
# binaries (cargo), stripped, with the libraries they load (scripts/oci-image.py), into
# ${PMS_IMAGES:-$HOME/.cache/pms/images}/pms-{worker,operator}.tar, tagged with the chart's appVersion.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
out=${PMS_IMAGES:-$HOME/.cache/pms/images}
target=${CARGO_TARGET_DIR:-$root/target}
version=$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$root/charts/paimon-mysql-sync/Chart.yaml")
[ -n "$version" ] || { echo "images.sh: no appVersion in the chart" >&2; exit 1; }
(cd "$root" && cargo build --release -p pms-worker -p pms-operator) >&2
mkdir -p "$out"
for b in pms-worker pms-operator; do
  python3 "$here/oci-image.py" --binary "$target/release/$b" \
    --ref "paimon-mysql-sync/$b:$version" --out "$out/$b.tar"
done

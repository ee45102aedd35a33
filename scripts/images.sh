#!/usr/bin/env bash
# Builds the worker and operator images as OCI archives, without a container engine: the binaries,
# stripped, with the libraries they load (scripts/oci-image.py), into
# ${PMS_IMAGES:-$HOME/.cache/pms/images}/pms-{worker,operator}.tar, tagged with the chart's appVersion.
#   scripts/images.sh          release binaries (cargo build --release)
#   scripts/images.sh BIN_DIR  the binaries already in BIN_DIR (make test: the test build's, so that
#                              nothing is compiled a second time)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
out=${PMS_IMAGES:-$HOME/.cache/pms/images}
target=${CARGO_TARGET_DIR:-$root/target}
version=$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$root/charts/paimon-mysql-sync/Chart.yaml")
[ -n "$version" ] || { echo "images.sh: no appVersion in the chart" >&2; exit 1; }
bins=${1:-}
if [ -z "$bins" ]; then
  (cd "$root" && cargo build --release -p pms-worker -p pms-operator) >&2
  bins=$target/release
fi
mkdir -p "$out"
for b in pms-worker pms-operator; do
  [ -x "$bins/$b" ] || { echo "images.sh: $bins/$b is missing (make build makes it)" >&2; exit 1; }
  # The worker's HDFS client opens MIT's GSSAPI library for Kerberos (source.kerberos).
  extra=()
  [ "$b" != pms-worker ] || extra=(--dlopen libgssapi_krb5.so.2)
  python3 "$here/oci-image.py" --binary "$bins/$b" "${extra[@]}" \
    --ref "ghcr.io/paimon-mysql-sync/$b:$version" --out "$out/$b.tar"
done

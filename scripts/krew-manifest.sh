#!/usr/bin/env bash
# `make krew`: the kubectl plugin's release archive and its krew manifest, with the archive's
# checksum: target/krew/kubectl-pms-linux-<arch>.tar.gz and target/krew/pms.yaml
# (`kubectl krew install --manifest=target/krew/pms.yaml --archive=target/krew/kubectl-pms-linux-<arch>.tar.gz`).
set -euo pipefail
cd "$(dirname "$0")/.."
target=${CARGO_TARGET_DIR:-target}
cargo build --release -p kubectl-pms
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
arch=$(uname -m | sed 's/x86_64/amd64/; s/aarch64/arm64/')
out=target/krew
mkdir -p "$out/stage"
cp "$target/release/kubectl-pms" "$out/stage/"
archive="$out/kubectl-pms-linux-$arch.tar.gz"
tar -C "$out/stage" -czf "$archive" .
sha=$(sha256sum "$archive" | cut -d' ' -f1)
sed -e "s/@VERSION@/$version/g" -e "s/@ARCH@/$arch/g" -e "s/@SHA256@/$sha/g" kubectl-pms/krew.yaml >"$out/pms.yaml"
echo "krew: $out/pms.yaml ($archive, sha256 $sha)"

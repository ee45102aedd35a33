#!/usr/bin/env bash
# The release's artifacts, from binaries already built (nothing is compiled here), into OUT:
#   scripts/release.sh binaries BIN_DIR OUT [OS-ARCH]   pms-worker-OS-ARCH.tar.gz and
#                                                       kubectl-pms-OS-ARCH.tar.gz (default: this machine's)
#   scripts/release.sh chart OUT                        paimon-mysql-sync-VERSION.tgz (helm package)
#   scripts/release.sh finish OUT                       SHA256SUMS of everything in OUT, and krew.yaml
#                                                       naming every kubectl-pms archive there
#   scripts/release.sh check-tag TAG                    TAG is v<version> of the workspace and the chart's appVersion
# The release workflow (.github/workflows/release.yml) runs them on its runners, then pushes.
# `make test` runs binaries, chart and finish on the test build (CI's dry run up to the push: no
# second, release build), and the real-cluster test installs the chart from that package.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
log() { echo "release: $*" >&2; }
die() { log "$*"; exit 1; }

version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)
app_version=$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$root/charts/paimon-mysql-sync/Chart.yaml")
repo_url=https://github.com/paimon-mysql-sync/paimon-mysql-sync

# GNU tar (gtar on macOS runners) for reproducible archives.
tar=$(command -v gtar || command -v tar)

this_platform() {
  echo "$(uname -s | tr '[:upper:]' '[:lower:]')-$(uname -m | sed 's/x86_64/amd64/; s/aarch64/arm64/')"
}

# archive BIN OUT PLATFORM: BIN alone in OUT/<name>-PLATFORM.tar.gz (a fixed mtime and owner, so the
# same binary gives the same archive and checksum).
archive() {
  local bin=$1 out=$2 platform=$3 name stage
  name=$(basename "$bin")
  [ -x "$bin" ] || die "$bin is missing (build it first)"
  stage=$(mktemp -d)
  cp "$bin" "$stage/$name"
  "$tar" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$stage" -czf "$out/$name-$platform.tar.gz" "$name"
  rm -rf "$stage"
}

cmd=${1:-}
case $cmd in
binaries)
  [ $# -ge 3 ] || die "usage: release.sh binaries BIN_DIR OUT [OS-ARCH]"
  platform=${4:-$(this_platform)}
  mkdir -p "$3"
  for b in pms-worker kubectl-pms; do archive "$2/$b" "$3" "$platform"; done
  log "binaries for $platform in $3"
  ;;
chart)
  [ $# -eq 2 ] || die "usage: release.sh chart OUT"
  mkdir -p "$2"
  helm=${PMS_HELM:-$(command -v helm || echo "$("$root/scripts/k8s-tools.sh" 2>/dev/null)/helm")}
  "$helm" lint "$root/charts/paimon-mysql-sync" >&2
  "$helm" package "$root/charts/paimon-mysql-sync" -d "$2" >&2
  ;;
finish)
  [ $# -eq 2 ] || die "usage: release.sh finish OUT"
  out=$2
  platforms=""
  for a in "$out"/kubectl-pms-*.tar.gz; do
    [ -f "$a" ] || die "no kubectl-pms archive in $out (run: release.sh binaries …)"
    p=$(basename "$a" .tar.gz)
    p=${p#kubectl-pms-}
    platforms+="    - selector:
        matchLabels:
          os: ${p%-*}
          arch: ${p#*-}
      uri: $repo_url/releases/download/v$version/kubectl-pms-$p.tar.gz
      sha256: \"$(sha256sum "$a" | cut -d' ' -f1)\"
      bin: kubectl-pms
"
  done
  # The template's last line is "  platforms: []".
  sed -e "s/@VERSION@/$version/g" -e '/^  platforms: \[\]$/,$d' "$root/kubectl-pms/krew.yaml" >"$out/krew.yaml"
  printf '  platforms:\n%s' "$platforms" >>"$out/krew.yaml"
  (cd "$out" && find . -maxdepth 1 -type f ! -name SHA256SUMS -printf '%f\n' | sort | xargs sha256sum >SHA256SUMS)
  log "$out/krew.yaml and $out/SHA256SUMS ($(wc -l <"$out/SHA256SUMS") files)"
  ;;
check-tag)
  [ $# -eq 2 ] || die "usage: release.sh check-tag TAG"
  [ "$2" = "v$version" ] || die "tag $2 is not v$version, the workspace's version (Cargo.toml)"
  [ "$app_version" = "$version" ] || die "the chart's appVersion is $app_version, not $version: bump it with the workspace's"
  grep -q "^## \[$version\]" "$root/CHANGELOG.md" || die "CHANGELOG.md has no section ## [$version]"
  ;;
*)
  die "usage: release.sh binaries|chart|finish|check-tag …"
  ;;
esac

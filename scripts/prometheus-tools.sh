#!/usr/bin/env bash
# Prints a directory holding `prometheus` and `promtool` for the monitoring tests, cached under
# ~/.cache/pms/prometheus.
#
# On Debian (CI's machines): the distribution's `prometheus` package, downloaded and unpacked
# (`apt-get download`, no install, so no service starts and no dependency is pulled): about 2 s
# cold. Building Prometheus from the Go module proxy cost about 7 CPU-minutes of the cold CI run's
# 2 cores (27 minutes of wall time beside cargo), on the run's critical path.
# Elsewhere, or with PMS_PROMETHEUS_FROM=source: built from the Go module proxy (module
# github.com/prometheus/prometheus, its v0.3xx tags are Prometheus 3.x) without the web UI's assets
# and, by the `remove_all_sd` build tag, without the cloud service-discovery plugins.
set -euo pipefail

cache=${PMS_PROMETHEUS_CACHE:-$HOME/.cache/pms/prometheus}
from=${PMS_PROMETHEUS_FROM:-}
log() { echo "prometheus-tools: $*" >&2; }
ready() { [[ -x $1/prometheus && -x $1/promtool && -f $1/stamp && $(cat "$1/stamp") == "$2" ]]; }

if [[ -z $from ]] && command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null; then
  version=$(apt-cache policy prometheus 2>/dev/null | sed -n 's/^ *Candidate: //p')
  if [[ -n $version && $version != "(none)" ]]; then
    bin=$cache/debian/bin
    stamp="debian prometheus $version"
    if ! ready "$bin" "$stamp"; then
      tmp=$(mktemp -d)
      trap 'rm -rf "$tmp"' EXIT
      log "unpacking Debian's prometheus $version"
      # _apt can't write a root-owned temp dir; the download itself needs no sandbox.
      chmod 777 "$tmp"
      (cd "$tmp" && apt-get download -q "prometheus=$version" >/dev/null 2>&1) ||
        { log "apt-get download prometheus=$version failed (is the Debian mirror reachable?)"; exit 1; }
      dpkg-deb -x "$tmp"/prometheus_*.deb "$tmp/x"
      mkdir -p "$bin"
      cp "$tmp/x/usr/bin/prometheus" "$tmp/x/usr/bin/promtool" "$bin/"
      echo "$stamp" >"$bin/stamp"
    fi
    echo "$bin"
    exit 0
  fi
  log "Debian has no prometheus package here; building it from the Go module proxy"
fi

version=${PMS_PROMETHEUS_VERSION:-v0.316.0}
tags=${PMS_PROMETHEUS_TAGS-remove_all_sd}
bin=$cache/bin
command -v go >/dev/null || { log "go is not installed (apt-get install -y golang, or the Go toolchain)"; exit 1; }
stamp="github.com/prometheus/prometheus@$version tags=$tags $(go env GOVERSION)"
if ready "$bin" "$stamp"; then
  echo "$bin"
  exit 0
fi
mkdir -p "$bin"
log "building prometheus and promtool $version, tags '$tags' (about 4 minutes cold)"
start=$SECONDS
export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=mod GOBIN=$bin
nice -n 10 go install -trimpath -tags "$tags" \
  "github.com/prometheus/prometheus/cmd/promtool@$version" \
  "github.com/prometheus/prometheus/cmd/prometheus@$version" >&2 ||
  { log "go install failed (is the Go module proxy reachable?)"; exit 1; }
echo "$stamp" >"$bin/stamp"
log "built in $((SECONDS - start)) s: $("$bin/promtool" --version 2>&1 | head -1)"
echo "$bin"

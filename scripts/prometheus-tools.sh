#!/usr/bin/env bash
# Builds `prometheus` and `promtool` from the Go module proxy (module github.com/prometheus/prometheus;
# its v0.3xx tags are Prometheus 3.x), cached in ~/.cache/pms/prometheus/bin; prints that directory.
# Without the web UI's assets (the tests use the HTTP API only) and, by the `remove_all_sd` build
# tag, without the cloud/Kubernetes/Consul/... service discovery plugins (static, file and HTTP
# discovery stay): 420 CPU-seconds instead of 700, about 3.5 minutes cold on 2 idle cores
# (downloads cached; 6 minutes with every plugin); warm: instant (a stamp names the version, the
# build tags and the Go toolchain). PMS_PROMETHEUS_TAGS="" builds every plugin.
set -euo pipefail

version=${PMS_PROMETHEUS_VERSION:-v0.316.0}
cache=${PMS_PROMETHEUS_CACHE:-$HOME/.cache/pms/prometheus}
tags=${PMS_PROMETHEUS_TAGS-remove_all_sd}
bin=$cache/bin
log() { echo "prometheus-tools: $*" >&2; }

command -v go >/dev/null || { log "go is not installed (apt-get install -y golang, or the Go toolchain)"; exit 1; }
stamp="github.com/prometheus/prometheus@$version tags=$tags $(go env GOVERSION)"
if [[ -x $bin/prometheus && -x $bin/promtool && -f $bin/stamp && $(cat "$bin/stamp") == "$stamp" ]]; then
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

#!/usr/bin/env bash
# Builds the MySQL 8 dialect test server (tests/mysql8: go-mysql-server v0.20.0 from the Go module
# proxy), cached in ~/.cache/pms/mysql8; prints the binary's path. About 2 minutes cold on 2 cores
# (downloads cached: 450 MB of modules); warm: instant (a stamp names the sources and the toolchain).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cache=${PMS_MYSQL8_CACHE:-$HOME/.cache/pms/mysql8}
bin=$cache/pms-mysql8
log() { echo "mysql8-server: $*" >&2; }

command -v go >/dev/null || { log "go is not installed (apt-get install -y golang, or the Go toolchain)"; exit 1; }
stamp="$(cat "$here"/tests/mysql8/{go.mod,go.sum,main.go} | sha256sum | cut -c1-16) $(go env GOVERSION)"
if [[ -x $bin && -f $cache/stamp && $(cat "$cache/stamp") == "$stamp" ]]; then
  echo "$bin"
  exit 0
fi
mkdir -p "$cache"
log "building the MySQL 8 dialect server (go-mysql-server, about 2 minutes cold)"
start=$SECONDS
(cd "$here/tests/mysql8" && CGO_ENABLED=0 GOTOOLCHAIN=local nice -n 10 go build -trimpath -o "$bin" .) >&2 ||
  { log "go build failed (is the Go module proxy reachable?)"; exit 1; }
echo "$stamp" >"$cache/stamp"
log "built in $((SECONDS - start)) s"
echo "$bin"

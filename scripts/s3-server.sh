#!/usr/bin/env bash
# A throw-away S3 server on a free loopback port, for tests: Versity S3 Gateway (versitygw, Apache-2.0)
# with its posix backend, built once from source through the Go module proxy.
#   scripts/s3-server.sh build              → builds (or reuses) the binary, prints its path
#   scripts/s3-server.sh start DIR [BUCKET…] → starts it (objects, pid, port, log under DIR), creates
#                                             the buckets (default: pms), writes DIR/endpoint and
#                                             DIR/env, prints the endpoint (http://127.0.0.1:PORT)
#   scripts/s3-server.sh stop DIR            → stops it by pid and removes DIR
#   scripts/s3-server.sh halt DIR / resume DIR → stops it, keeping DIR / starts it again on the same
#                                             port with the same objects (a store that goes away)
# Credentials: access key pms-test, secret pms-test-secret, region us-east-1, path-style requests
# (http://127.0.0.1:PORT/BUCKET/KEY). DIR/env holds the same as AWS_* exports for a shell.
#
# Why versitygw: it honours conditional writes the way S3 does, which our fencing of a zombie
# writer relies on: PUT with If-None-Match: * answers 412 when the key exists, PUT with If-Match:
# <etag> answers 412 when the current ETag differs (404 when the key is missing), and both hold
# under concurrent writers (the check and the publish happen under a per-object lock). It builds
# in about 2 minutes cold on 2 cores and starts in well under a second. MinIO and Garage are AGPL;
# s3s-fs checks the conditions outside any lock, so two racing writers can both win.
#
# The binary is cached in ${PMS_S3_CACHE:-$HOME/.cache/pms/s3}/bin with a stamp of the pinned
# version and Go version, so a rerun of build with it in place does nothing; start never builds,
# it fails with a message when the binary is missing. PMS_S3_BIN names another versitygw binary;
# PMS_S3_VERSION overrides the pinned version; PMS_S3_ARGS adds global server options at start
# (e.g. "--keep-alive"; without it every response closes its connection, so a client never reuses
# a connection the server has dropped). The data directory must support user xattrs (ext4, xfs,
# tmpfs on a current kernel): versitygw keeps ETags and metadata there.
set -euo pipefail

usage="usage: s3-server.sh build | start DIR [BUCKET...] | stop DIR | halt DIR | resume DIR"
cmd=${1:?$usage}

cache=${PMS_S3_CACHE:-$HOME/.cache/pms/s3}
version=${PMS_S3_VERSION:-v1.8.0}
module=github.com/versity/versitygw
access_key=pms-test
secret_key=pms-test-secret
region=us-east-1

log() { echo "s3-server.sh: $*" >&2; }

bin_path() { echo "${PMS_S3_BIN:-$cache/bin/versitygw}"; }

stamp() { echo "$module@$version $(go env GOVERSION)"; }

build() {
  local bin=$cache/bin
  command -v go >/dev/null || { log "go is not installed"; exit 1; }
  mkdir -p "$bin"
  if [[ -x $bin/versitygw && -f $bin/versitygw.stamp && $(cat "$bin/versitygw.stamp") == "$(stamp)" ]]; then
    echo "$bin/versitygw"
    return 0
  fi
  local tmp start=$SECONDS
  tmp=$(mktemp -d "$cache/gobin.XXXXXX")
  log "building $module/cmd/versitygw@$version -> $bin/versitygw"
  # go install PKG@VERSION builds with versitygw's own go.mod, outside any module of ours.
  if ! (cd "$cache" && env CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS= GOBIN="$tmp" nice -n 10 \
    go install -trimpath \
    -ldflags="-s -w -X main.Version=$version -X main.Build=$version -X main.BuildTime=none" \
    "$module/cmd/versitygw@$version") >&2; then
    rm -rf "$tmp"
    log "building $module@$version failed"
    exit 1
  fi
  mv -f "$tmp/versitygw" "$bin/versitygw"
  rm -rf "$tmp"
  stamp >"$bin/versitygw.stamp"
  log "built versitygw $version in $((SECONDS - start)) s ($(du -h "$bin/versitygw" | cut -f1))"
  echo "$bin/versitygw"
}

# s3 METHOD URL [curl args...]: a SigV4-signed request; prints the HTTP status, body to $dir/curl.out.
s3() {
  local method=$1 url=$2
  shift 2
  curl -sS -o "$dir/curl.out" -w '%{http_code}' -X "$method" \
    --aws-sigv4 "aws:amz:$region:s3" --user "$access_key:$secret_key" \
    -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$@" "$url" 2>>"$dir/curl.err" || true
}

# launch: starts the server on $port over $dir/data and waits until it answers.
launch() {
  local bin endpoint=http://127.0.0.1:$port
  bin=$(bin_path)
  [ -x "$bin" ] || { log "$bin missing: build it first with scripts/s3-server.sh build"; exit 1; }
  # shellcheck disable=SC2086 # PMS_S3_ARGS is a list of options
  "$bin" --access "$access_key" --secret "$secret_key" --region "$region" \
    --port "127.0.0.1:$port" --quiet ${PMS_S3_ARGS:-} posix "$dir/data" \
    </dev/null >>"$dir/server.log" 2>&1 &
  echo $! >"$dir/server.pid"
  local ok= code
  for _ in $(seq 1 200); do
    # Any HTTP answer (403 to an unsigned request) means it listens.
    code=$(curl -s -o /dev/null -w '%{http_code}' "$endpoint/" 2>/dev/null || true)
    if [ -n "$code" ] && [ "$code" != 000 ]; then ok=1; break; fi
    kill -0 "$(cat "$dir/server.pid")" 2>/dev/null || break
    sleep 0.05
  done
  if [ -z "$ok" ]; then
    log "versitygw did not answer within 10 s; server.log:"; tail -30 "$dir/server.log" >&2
    stop_server; exit 1
  fi
}

# shellcheck source=lib/stop-pid.sh
. "$(dirname "$0")/lib/stop-pid.sh"
stop_server() { stop_pid "$dir/server.pid"; }

case "$cmd" in
build)
  build
  ;;
start)
  dir=${2:?$usage}
  shift 2
  buckets=("$@")
  [ ${#buckets[@]} -gt 0 ] || buckets=(pms)
  command -v curl >/dev/null || { log "curl missing (apt-get install -y curl)"; exit 1; }
  mkdir -p "$dir/data"
  dir=$(cd "$dir" && pwd)
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
  endpoint=http://127.0.0.1:$port
  launch
  for b in "${buckets[@]}"; do
    code=$(s3 PUT "$endpoint/$b")
    if [ "$code" != 200 ]; then
      log "creating bucket $b answered $code:"; cat "$dir/curl.out" "$dir/curl.err" >&2 2>/dev/null || true
      tail -10 "$dir/server.log" >&2; stop_server; exit 1
    fi
  done
  echo "$port" >"$dir/port"
  echo "$endpoint" >"$dir/endpoint"
  cat >"$dir/env" <<EOF
export AWS_ENDPOINT=$endpoint
export AWS_ENDPOINT_URL=$endpoint
export AWS_ACCESS_KEY_ID=$access_key
export AWS_SECRET_ACCESS_KEY=$secret_key
export AWS_REGION=$region
export AWS_DEFAULT_REGION=$region
export AWS_ALLOW_HTTP=true
export AWS_VIRTUAL_HOSTED_STYLE_REQUEST=false
EOF
  echo "$endpoint"
  ;;
stop)
  dir=${2:?$usage}
  stop_server
  rm -rf "$dir"
  ;;
halt)
  dir=${2:?$usage}
  stop_server
  ;;
resume)
  dir=$(cd "${2:?$usage}" && pwd)
  port=$(cat "$dir/port")
  launch
  ;;
*) echo "$usage" >&2; exit 2 ;;
esac

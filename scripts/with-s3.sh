#!/usr/bin/env bash
# Runs a command with a throw-away S3 server (scripts/s3-server.sh, built beforehand):
# PMS_TEST_S3_ENDPOINT is set for it (bucket `pms`, access key pms-test / pms-test-secret,
# path-style), and the server is stopped when the command ends, however it ends.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/pms-s3.XXXXXX")
trap '"$here/s3-server.sh" stop "$dir"' EXIT
endpoint=$("$here/s3-server.sh" start "$dir" pms)
export PMS_TEST_S3_ENDPOINT=$endpoint
echo "with-s3: S3 (versitygw) at $endpoint, bucket pms" >&2
"$@"

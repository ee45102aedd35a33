#!/usr/bin/env bash
# Runs a command with a throw-away Kubernetes API server (scripts/kube-apiserver.sh): KUBECONFIG and
# PMS_TEST_KUBECONFIG name its admin kubeconfig, and the server is stopped (by pid) when the command
# ends, however it ends.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/pms-kube.XXXXXX")
trap '"$here/kube-apiserver.sh" stop "$dir"' EXIT
kubeconfig=$("$here/kube-apiserver.sh" start "$dir")
export KUBECONFIG=$kubeconfig PMS_TEST_KUBECONFIG=$kubeconfig PMS_TEST_KUBE_DIR=$dir
# helm (and kubectl, when built) for the tests; warm, this is instant.
PMS_K8S_BIN=${PMS_K8S_BIN:-$("$here/k8s-tools.sh" 2>/dev/null)}
export PMS_K8S_BIN
echo "with-kube-apiserver: API server at $(sed -n 's/^ *server: //p' "$kubeconfig") (KUBECONFIG=$kubeconfig)" >&2
"$@"

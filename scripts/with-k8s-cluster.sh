#!/usr/bin/env bash
# Runs a command with a real single-node cluster (scripts/k8s-cluster.sh) holding the repo's images
# (scripts/images.sh): PMS_TEST_CLUSTER_KUBECONFIG names its admin kubeconfig and
# PMS_MARIADB_BIND adds the node's bridge address, so that a MariaDB started inside (with-mariadb.sh)
# is reachable from pods. The cluster is stopped when the command ends, however it ends.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/pms-cluster.XXXXXX")
trap '"$here/k8s-cluster.sh" stop "$dir"' EXIT
# A signal ends the command through the EXIT trap too: the cluster changes the host (bridge, NAT).
trap 'exit 143' TERM INT
images=${PMS_IMAGES:-$HOME/.cache/pms/images}
start=$SECONDS
kubeconfig=$("$here/k8s-cluster.sh" start "$dir" "$images/pms-worker.tar" "$images/pms-operator.tar")
export PMS_TEST_CLUSTER_KUBECONFIG=$kubeconfig PMS_TEST_CLUSTER_DIR=$dir PMS_MARIADB_BIND=127.0.0.1,10.88.0.1
echo "with-k8s-cluster: node Ready in $((SECONDS - start)) s (KUBECONFIG=$kubeconfig)" >&2
"$@"

#!/usr/bin/env bash
# A real single-node Kubernetes cluster for the end-to-end tests: containerd + runc (Debian), the CNI
# bridge plugin, etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kubelet (built from
# the Go module proxy by scripts/k8s-tools.sh, cached). Pods really run. See ../shared notes in
# docs/architecture.md ("The test cluster") for why each setting is there.
#   scripts/k8s-cluster.sh start DIR [IMAGE.tar ...] → starts it (state, logs and pids under DIR),
#                     imports the OCI archives into containerd, prints DIR/kubeconfig (admin)
#   scripts/k8s-cluster.sh restart-kubelet DIR → stops and starts the kubelet alone (a node-level
#                     restart: the pods' containers keep running)
#   scripts/k8s-cluster.sh stop DIR → stops everything by pid, removes its mounts, bridge, NAT rule
#                     and DIR
# Networking: pods live on the bridge pms0 (10.88.0.0/16; the node is 10.88.0.1). There is no
# kube-proxy: a NAT rule sends the `kubernetes` Service (10.0.0.1:443) to the API server on the
# node, which is all the operator and workers need (they reach MySQL and S3 by address). One
# cluster per machine, as root (the kubelet has fixed paths such as /var/lib/kubelet/device-plugins).
set -euo pipefail

cmd=${1:?usage: k8s-cluster.sh start|stop|restart-kubelet DIR [IMAGE.tar ...]}
dir=${2:?usage: k8s-cluster.sh start|stop DIR [IMAGE.tar ...]}
shift 2
here=$(cd "$(dirname "$0")" && pwd)
node=pms-node
bridge=pms0
node_ip=10.88.0.1
pod_cidr=10.88.0.0/16

log() { echo "k8s-cluster.sh: $*" >&2; }
fail() { log "$*"; exit 1; }

# shellcheck source=lib/stop-pid.sh
. "$here/lib/stop-pid.sh"

# wait_for WHAT SECONDS CMD...: runs CMD until it succeeds, or fails with WHAT after SECONDS.
wait_for() {
  local what=$1 secs=$2 start=$SECONDS
  shift 2
  until "$@" >/dev/null 2>&1; do
    [ $((SECONDS - start)) -lt "$secs" ] || { log "$what: not within ${secs}s"; return 1; }
    sleep 0.5
  done
}

nat_rule=(PREROUTING -d 10.0.0.1/32 -p tcp --dport 443 -m comment --comment "pms-k8s-cluster" -j DNAT)

stop_cluster() {
  [ -d "$dir" ] || return 0
  local kc=$dir/api/kubeconfig
  if [ -f "$dir/kubelet.pid" ] && [ -f "$kc" ]; then
    # Pods first, so their containers stop through the kubelet (SIGTERM, grace period).
    kubectl --kubeconfig "$kc" delete pods --all --all-namespaces --grace-period=5 --wait=true \
      --timeout=60s >/dev/null 2>&1 || true
  fi
  for p in kubelet scheduler controller-manager; do stop_pid "$dir/$p.pid" 10; done
  if [ -S "$dir/containerd.sock" ]; then
    for t in $(ctr -a "$dir/containerd.sock" -n k8s.io tasks ls -q 2>/dev/null); do
      ctr -a "$dir/containerd.sock" -n k8s.io tasks kill -s SIGKILL "$t" >/dev/null 2>&1 || true
    done
  fi
  stop_pid "$dir/containerd.pid" 10
  # Shims outlive containerd: they are ours when they name our socket.
  for pid in $(pgrep -f "containerd-shim.*$dir/containerd.sock" || true); do kill -9 "$pid" 2>/dev/null || true; done
  [ -d "$dir/api" ] && "$here/kube-apiserver.sh" stop "$dir/api" || true
  grep -o " $dir[^ ]*" /proc/mounts | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
  while iptables -t nat -C "${nat_rule[@]}" --to-destination "$(cat "$dir/api.dest" 2>/dev/null || echo 0.0.0.0:0)" 2>/dev/null; do
    iptables -t nat -D "${nat_rule[@]}" --to-destination "$(cat "$dir/api.dest")"
  done
  ip link del "$bridge" 2>/dev/null || true
  rm -rf /var/lib/cni/networks/pms /var/log/pods /var/log/containers
  rm -rf "$dir"
}

# The kubelet (also restarted alone by `restart-kubelet`: its pods keep running meanwhile).
start_kubelet() {
  local bin kubeconfig=$dir/api/kubeconfig
  bin=$(cat "$dir/bin.path")
  "$bin/kubelet" --config="$dir/kubelet.yaml" --kubeconfig="$kubeconfig" --root-dir="$dir/kubelet" \
    --hostname-override="$node" --node-ip="$node_ip" --address=0.0.0.0 \
    </dev/null >>"$dir/kubelet.log" 2>&1 &
  echo $! >"$dir/kubelet.pid"
  ready() {
    [ "$(kubectl --kubeconfig "$kubeconfig" get node "$node" \
      -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]
  }
  # healthz first: after a restart the node may still show the old kubelet's Ready.
  if ! wait_for "kubelet healthz" 60 curl -sf http://127.0.0.1:10248/healthz || ! wait_for "node $node Ready" 120 ready; then
    tail -30 "$dir/kubelet.log" >&2
    return 1
  fi
}

case "$cmd" in
start)
  [ "$(id -u)" = 0 ] || fail "needs root (containerd, the kubelet, the bridge)"
  for b in containerd containerd-shim-runc-v2 runc ctr iptables ip gcc strip python3 openssl curl kubectl; do
    command -v "$b" >/dev/null || fail "$b is missing (apt-get install -y containerd runc containernetworking-plugins iptables iproute2 gcc binutils; kubectl from scripts/k8s-tools.sh)"
  done
  cni_bin=/usr/lib/cni
  for p in bridge host-local loopback; do
    [ -x "$cni_bin/$p" ] || fail "CNI plugin $cni_bin/$p is missing (apt-get install -y containernetworking-plugins)"
  done
  if [ -n "${PMS_K8S_BIN:-}" ] && [ -x "$PMS_K8S_BIN/kubelet" ]; then bin=$PMS_K8S_BIN; else bin=$(PMS_K8S_NODE=1 "$here/k8s-tools.sh"); fi
  for b in kube-apiserver kube-controller-manager kube-scheduler kubelet etcd; do
    [ -x "$bin/$b" ] || fail "$bin/$b missing (PMS_K8S_NODE=1 scripts/k8s-tools.sh)"
  done
  # One cluster per machine. A live one (its kubelet runs) is waited for; a bridge whose cluster is
  # gone (the machine's processes were killed, the network kept) is stale and removed.
  no_other_kubelet() { ! pgrep -f "[k]ubelet.*--hostname-override=$node"; }
  wait_for "the other test cluster on this machine to stop" 1800 no_other_kubelet ||
    fail "another test cluster runs (kubelet --hostname-override=$node)"
  if ip link show "$bridge" >/dev/null 2>&1; then
    log "bridge $bridge left by a cluster that is gone: removing it and its NAT rule"
    ip link del "$bridge"
    iptables -t nat -S PREROUTING | grep -- '--comment pms-k8s-cluster' | sed 's/^-A //' |
      while read -r rule; do eval "iptables -t nat -D $rule"; done
  fi
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  trap 'log "start failed; logs in $dir"; stop_cluster' ERR

  # The node's bridge and the pods' network.
  ip link add "$bridge" type bridge
  ip addr add "$node_ip/16" dev "$bridge"
  ip link set "$bridge" up
  sysctl -qw net.ipv4.ip_forward=1
  mkdir -p "$dir/cni"
  cat >"$dir/cni/10-pms.conflist" <<EOF
{"cniVersion": "0.4.0", "name": "pms", "plugins": [
  {"type": "bridge", "bridge": "$bridge", "isGateway": true, "ipMasq": false,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$pod_cidr", "gateway": "$node_ip"}]],
            "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "loopback"}]}
EOF

  # containerd with its own root, state and socket.
  cat >"$dir/containerd.toml" <<EOF
version = 2
root = "$dir/containerd/root"
state = "$dir/containerd/state"
[grpc]
  address = "$dir/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:pms"
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$cni_bin"
    conf_dir = "$dir/cni"
EOF
  containerd --config "$dir/containerd.toml" </dev/null >"$dir/containerd.log" 2>&1 &
  echo $! >"$dir/containerd.pid"
  wait_for "containerd" 30 ctr -a "$dir/containerd.sock" version

  # Images: the pause container from Kubernetes' own source, then the given archives.
  pause_c=$(go env GOMODCACHE)/k8s.io/kubernetes@$(sed -n 's/^k8s.io\/kubernetes@\([^ ]*\) .*/\1/p' "$bin/kubelet.stamp")/build/pause/linux/pause.c
  [ -f "$pause_c" ] || fail "$pause_c missing (scripts/k8s-tools.sh downloads it)"
  gcc -Os -static -o "$dir/pause" "$pause_c"
  python3 "$here/oci-image.py" --binary "$dir/pause" --path /pause --user 65535:65535 \
    --ref registry.k8s.io/pause:pms --out "$dir/pause.tar"
  for image in "$dir/pause.tar" "$@"; do
    ctr -a "$dir/containerd.sock" -n k8s.io images import "$image" >"$dir/import.log" 2>&1 ||
      { cat "$dir/import.log" >&2; fail "importing $image failed"; }
  done

  # etcd and the API server, reachable from pods on the node's bridge address.
  kubeconfig=$(PMS_K8S_BIN=$bin PMS_KUBE_NODE_IP=$node_ip "$here/kube-apiserver.sh" start "$dir/api")
  api_port=$(cat "$dir/api/apiserver.port")
  echo "$node_ip:$api_port" >"$dir/api.dest"
  iptables -t nat -A "${nat_rule[@]}" --to-destination "$node_ip:$api_port"
  pki=$dir/api/pki

  "$bin/kube-controller-manager" --kubeconfig="$kubeconfig" --leader-elect=false \
    --service-account-private-key-file="$pki/sa.key" --root-ca-file="$pki/ca.crt" \
    --use-service-account-credentials=false --bind-address=127.0.0.1 --secure-port=0 \
    </dev/null >"$dir/controller-manager.log" 2>&1 &
  echo $! >"$dir/controller-manager.pid"
  "$bin/kube-scheduler" --kubeconfig="$kubeconfig" --leader-elect=false \
    --bind-address=127.0.0.1 --secure-port=0 \
    </dev/null >"$dir/scheduler.log" 2>&1 &
  echo $! >"$dir/scheduler.pid"

  mkdir -p "$dir/kubelet"
  cat >"$dir/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupsPerQOS: false
enforceNodeAllocatable: []
failSwapOn: false
evictionHard: {}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
resolvConf: ""
containerRuntimeEndpoint: unix://$dir/containerd.sock
authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
readOnlyPort: 0
serializeImagePulls: false
EOF
  echo "$bin" >"$dir/bin.path"
  start_kubelet
  wait_for "the default ServiceAccount" 60 kubectl --kubeconfig "$kubeconfig" get serviceaccount default -n default
  trap - ERR
  echo "$kubeconfig"
  ;;
restart-kubelet)
  [ -f "$dir/kubelet.pid" ] || fail "no cluster in $dir"
  stop_pid "$dir/kubelet.pid" 10
  start_kubelet
  ;;
stop)
  stop_cluster
  ;;
*) echo "usage: k8s-cluster.sh start|stop|restart-kubelet DIR [IMAGE.tar ...]" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# A throw-away Kubernetes API server (etcd + kube-apiserver, no controller-manager, no scheduler,
# no kubelet) on free loopback ports, for tests.
#   scripts/kube-apiserver.sh start DIR  → starts it (etcd data, certs, logs, pids under DIR) and
#                                          prints the path of DIR/kubeconfig (admin, system:masters)
#   scripts/kube-apiserver.sh stop DIR   → stops both by pid and removes DIR
# The binaries come from scripts/k8s-tools.sh (built once from source into a cache), or from
# PMS_K8S_BIN when that names a directory holding kube-apiserver and etcd.
# Without a controller-manager the namespaces default/kube-system exist, but no ServiceAccounts,
# tokens, garbage collection or pods running; the ServiceAccount admission plugin is disabled (as
# envtest does) so that Pods can still be created.
# PMS_KUBE_NODE_IP=IP: the API server of a real cluster (scripts/k8s-cluster.sh): it also listens
# on IP (pods reach it there), advertises it, authorizes nodes, admits ServiceAccounts and reaches
# kubelets by their InternalIP.
set -euo pipefail

cmd=${1:?usage: kube-apiserver.sh start|stop DIR}
dir=${2:?usage: kube-apiserver.sh start|stop DIR}
here=$(cd "$(dirname "$0")" && pwd)

log() { echo "kube-apiserver.sh: $*" >&2; }

# shellcheck source=lib/stop-pid.sh
. "$here/lib/stop-pid.sh"

case "$cmd" in
start)
  if [ -n "${PMS_K8S_BIN:-}" ]; then
    bin=$PMS_K8S_BIN
  else
    bin=$("$here/k8s-tools.sh")
  fi
  for b in kube-apiserver etcd; do
    [ -x "$bin/$b" ] || { log "$bin/$b missing (run scripts/k8s-tools.sh)"; exit 1; }
  done
  command -v openssl >/dev/null || { log "openssl missing (apt-get install -y openssl)"; exit 1; }
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  pki=$dir/pki
  mkdir -p "$pki"

  # Three distinct free loopback ports, held open together while they are picked.
  read -r etcd_port peer_port api_port < <(python3 -c '
import socket
ss = [socket.socket() for _ in range(3)]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))
for s in ss: s.close()')

  # A CA, a serving certificate signed by it (clients such as rustls reject a CA certificate used
  # as a server certificate), and the service-account signing key.
  {
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$pki/ca.key" -out "$pki/ca.crt" -days 3650 \
      -subj "/CN=pms-test-ca" -addext "basicConstraints=critical,CA:TRUE" \
      -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature"
    openssl req -newkey rsa:2048 -nodes -keyout "$pki/apiserver.key" -out "$pki/apiserver.csr" \
      -subj "/CN=kube-apiserver"
    printf '%s\n' \
      "basicConstraints=critical,CA:FALSE" \
      "keyUsage=critical,digitalSignature,keyEncipherment" \
      "extendedKeyUsage=serverAuth" \
      "subjectAltName=IP:127.0.0.1,IP:10.0.0.1${PMS_KUBE_NODE_IP:+,IP:$PMS_KUBE_NODE_IP},DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local" \
      >"$pki/apiserver.ext"
    openssl x509 -req -in "$pki/apiserver.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
      -out "$pki/apiserver.crt" -days 3650 -extfile "$pki/apiserver.ext"
    openssl genrsa -out "$pki/sa.key" 2048
    openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub"
  } >"$dir/openssl.log" 2>&1 || { log "openssl failed:"; cat "$dir/openssl.log" >&2; exit 1; }

  token=$(openssl rand -hex 24)
  echo "$token,admin,admin,\"system:masters\"" >"$pki/tokens.csv"
  chmod 600 "$pki"/*.key "$pki/tokens.csv"

  "$bin/etcd" --name=pms --data-dir="$dir/etcd" \
    --listen-client-urls="http://127.0.0.1:$etcd_port" --advertise-client-urls="http://127.0.0.1:$etcd_port" \
    --listen-peer-urls="http://127.0.0.1:$peer_port" --initial-advertise-peer-urls="http://127.0.0.1:$peer_port" \
    --initial-cluster="pms=http://127.0.0.1:$peer_port" --initial-cluster-state=new \
    --unsafe-no-fsync=true --log-level=warn \
    </dev/null >"$dir/etcd.log" 2>&1 &
  echo $! >"$dir/etcd.pid"
  ok=
  for _ in $(seq 1 300); do
    if curl -fsS "http://127.0.0.1:$etcd_port/health" 2>/dev/null | grep -q '"health":"true"'; then ok=1; break; fi
    kill -0 "$(cat "$dir/etcd.pid")" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$ok" ]; then
    log "etcd did not become healthy:"; tail -30 "$dir/etcd.log" >&2; stop_pid "$dir/etcd.pid"; exit 1
  fi

  if [ -n "${PMS_KUBE_NODE_IP:-}" ]; then
    mode=(--bind-address=0.0.0.0 --advertise-address="$PMS_KUBE_NODE_IP" --authorization-mode=Node,RBAC
      --kubelet-preferred-address-types=InternalIP)
  else
    mode=(--bind-address=127.0.0.1 --advertise-address=127.0.0.1 --authorization-mode=RBAC
      --disable-admission-plugins=ServiceAccount)
  fi
  "$bin/kube-apiserver" \
    --etcd-servers="http://127.0.0.1:$etcd_port" \
    "${mode[@]}" --secure-port="$api_port" \
    --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
    --client-ca-file="$pki/ca.crt" \
    --token-auth-file="$pki/tokens.csv" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
    --service-cluster-ip-range=10.0.0.0/16 \
    --allow-privileged=true \
    --profiling=false \
    </dev/null >"$dir/apiserver.log" 2>&1 &
  echo $! >"$dir/apiserver.pid"
  echo "$api_port" >"$dir/apiserver.port"

  ok=
  start=$SECONDS
  while [ $((SECONDS - start)) -lt 90 ]; do
    if [ "$(curl -sS --cacert "$pki/ca.crt" -H "Authorization: Bearer $token" \
      "https://127.0.0.1:$api_port/readyz" 2>/dev/null)" = ok ]; then ok=1; break; fi
    kill -0 "$(cat "$dir/apiserver.pid")" 2>/dev/null || break
    sleep 0.25
  done
  if [ -z "$ok" ]; then
    log "kube-apiserver was not ready within 90 s; apiserver.log:"
    tail -40 "$dir/apiserver.log" >&2
    log "etcd.log:"; tail -10 "$dir/etcd.log" >&2
    curl -sS --cacert "$pki/ca.crt" -H "Authorization: Bearer $token" \
      "https://127.0.0.1:$api_port/readyz?verbose" 2>&1 | grep -v '\[+\]' >&2 || true
    stop_pid "$dir/apiserver.pid"; stop_pid "$dir/etcd.pid"
    exit 1
  fi

  cat >"$dir/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: pms-test
  cluster:
    server: https://127.0.0.1:$api_port
    certificate-authority-data: $(base64 -w0 <"$pki/ca.crt")
users:
- name: admin
  user:
    token: $token
contexts:
- name: pms-test
  context:
    cluster: pms-test
    user: admin
    namespace: default
current-context: pms-test
EOF
  chmod 600 "$dir/kubeconfig"
  echo "$dir/kubeconfig"
  ;;
stop)
  stop_pid "$dir/apiserver.pid"
  stop_pid "$dir/etcd.pid"
  rm -rf "$dir"
  ;;
*) echo "usage: kube-apiserver.sh start|stop DIR" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# Builds (or reuses) kube-apiserver, etcd, helm and actionlint (and kubectl when none is on PATH) from source
# through the Go module proxy into ${PMS_K8S_CACHE:-$HOME/.cache/pms/k8s}/bin, and prints that
# directory on stdout. Build logs go to stderr. A stamp file per binary records the pinned
# versions, so a rerun with the binaries in place does nothing.
#
# Every tool is built by one `go build` in one throw-away module (under the cache dir): see
# build_tools. kube-apiserver needs every k8s.io/<staging> module that kubernetes' own go.mod
# replaces with ./staging/src/k8s.io/<name> to be replaced by the published v0.X.Y of the same
# release; that list is read from the downloaded kubernetes go.mod.
#
# Overrides: PMS_K8S_VERSIONS (kubernetes versions to try, in order), PMS_ETCD_VERSION,
# PMS_HELM_VERSION, PMS_ACTIONLINT_VERSION, PMS_K8S_BUILD_KUBECTL=1 (build kubectl even if one is on PATH),
# PMS_K8S_NODE=1 (also kubelet, kube-controller-manager and kube-scheduler, for a real
# single-node cluster: scripts/k8s-cluster.sh).
set -euo pipefail

cache=${PMS_K8S_CACHE:-$HOME/.cache/pms/k8s}
bin=$cache/bin
k8s_versions=${PMS_K8S_VERSIONS:-v1.36.3 v1.36.1}
etcd_version=${PMS_ETCD_VERSION:-v3.6.16}
helm_version=${PMS_HELM_VERSION:-v3.21.4}
actionlint_version=${PMS_ACTIONLINT_VERSION:-v1.7.12}
mkdir -p "$bin" "$cache/src"

log() { echo "k8s-tools: $*" >&2; }

command -v go >/dev/null || { log "go is not installed"; exit 1; }
go_version=$(go env GOVERSION)

export CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=local
nice_cmd=(nice -n 10)

# up_to_date NAME STAMP: the binary exists and was built with exactly STAMP.
up_to_date() {
    [[ -x $bin/$1 && -f $bin/$1.stamp && $(cat "$bin/$1.stamp") == "$2" ]]
}

# new_module DIR MODULE_PATH: a fresh throw-away module in DIR.
new_module() {
    rm -rf "$1"
    mkdir -p "$1"
    printf 'module %s\n\ngo %s\n' "$2" "$(go env GOVERSION | sed -E 's/^go([0-9]+\.[0-9]+).*/\1.0/')" >"$1/go.mod"
}

# --- one module for every tool: kubernetes' binaries, etcd, helm (and actionlint, which lints the
# release workflow: small, and it shares their YAML and x/ modules) ---------------------------------
# They share most of their dependencies (k8s.io/api, apimachinery, client-go, grpc, protobuf,
# otel, the Prometheus client): in one module those resolve to one version each and compile once,
# and one `go build` runs the links (the slow, single-threaded part) side by side. Built apart,
# helm compiled its own k8s.io/* and etcd its own grpc stack, on the cold run's critical path.
want_kubectl=${PMS_K8S_BUILD_KUBECTL:-}
if [[ -z $want_kubectl ]] && ! command -v kubectl >/dev/null; then want_kubectl=1; fi
bins=(kube-apiserver etcd helm actionlint)
if [[ -n ${PMS_K8S_NODE:-} ]]; then bins+=(kube-controller-manager kube-scheduler kubelet); fi
[[ -z $want_kubectl ]] || bins+=(kubectl)

stamp_for() { echo "k8s.io/kubernetes@$1 etcd@$etcd_version helm@$helm_version actionlint@$actionlint_version $go_version"; }

# build_tools V: every binary of $bins from k8s.io/kubernetes@V, etcd and helm in one module.
build_tools() {
    local v=$1 dir=$cache/src/tools
    local json gomod sv
    json=$(cd "$cache" && GOFLAGS= go mod download -json "k8s.io/kubernetes@$v") || return 1
    gomod=$(sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p' <<<"$json")
    [[ -f $gomod ]] || { log "no go.mod for k8s.io/kubernetes@$v"; return 1; }
    sv=v0.${v#v1.} # staging modules are published as v0.<minor>.<patch>
    new_module "$dir" pms.local/k8s-tools
    {
        printf '\nrequire (\n\tk8s.io/kubernetes %s\n\tgo.etcd.io/etcd/server/v3 %s\n\thelm.sh/helm/v3 %s\n\tgithub.com/rhysd/actionlint %s\n)\n\nreplace (\n' \
            "$v" "$etcd_version" "$helm_version" "$actionlint_version"
        awk '$2 == "=>" && $3 ~ /^\.\/staging\/src\// { printf "\t%s => %s %s\n", $1, $1, V }' V="$sv" "$gomod"
        printf ')\n'
    } >>"$dir/go.mod"
    # etcd's server entry point, the same as etcd's own main.
    mkdir -p "$dir/etcd"
    printf '%s\n' 'package main' '' 'import (' '	"os"' '' '	"go.etcd.io/etcd/server/v3/etcdmain"' ')' '' \
        'func main() { etcdmain.Main(os.Args) }' >"$dir/etcd/main.go"
    log "k8s.io/kubernetes@$v: replacing $(grep -c '=> k8s.io/' "$dir/go.mod") staging modules with $sv"
    # Version stamps (-X of a symbol a binary lacks is ignored, so one set serves all).
    local maj=${v#v}; maj=${maj%%.*}
    local min=${v#v*.}; min=${min%%.*}
    local x="-X go.etcd.io/etcd/api/v3/version.GitSHA=$etcd_version"
    for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        x+=" -X $p.gitVersion=$v -X $p.gitMajor=$maj -X $p.gitMinor=$min -X $p.gitTreeState=clean"
    done
    # Helm's Makefile sets its version, and its default Kubernetes version from its client-go.
    x+=" -X helm.sh/helm/v3/internal/version.version=$helm_version -X helm.sh/helm/v3/internal/version.metadata="
    for p in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
        x+=" -X $p.k8sVersionMajor=$maj -X $p.k8sVersionMinor=$min"
    done
    local pkgs=() b start=$SECONDS out=$bin/.new
    for b in "${bins[@]}"; do
        case $b in
        etcd) pkgs+=(./etcd) ;;
        helm) pkgs+=(helm.sh/helm/v3/cmd/helm) ;;
        actionlint) pkgs+=(github.com/rhysd/actionlint/cmd/actionlint) ;;
        *) pkgs+=("k8s.io/kubernetes/cmd/$b") ;;
        esac
    done
    rm -rf "$out" && mkdir -p "$out"
    log "building ${bins[*]} -> $bin"
    (cd "$dir" && "${nice_cmd[@]}" go build -trimpath -ldflags="-s -w $x" -o "$out/" "${pkgs[@]}") >&2 || return 1
    for b in "${bins[@]}"; do
        mv -f "$out/$b" "$bin/$b"
        stamp_for "$v" >"$bin/$b.stamp"
    done
    rmdir "$out"
    log "built ${bins[*]} in $((SECONDS - start)) s"
}

tools_ok=
for v in $k8s_versions; do
    all=1
    for b in "${bins[@]}"; do up_to_date "$b" "$(stamp_for "$v")" || all=; done
    if [[ -n $all ]]; then tools_ok=$v; break; fi
done
if [[ -z $tools_ok ]]; then
    for v in $k8s_versions; do
        if build_tools "$v"; then tools_ok=$v; break; fi
        log "k8s.io/kubernetes@$v did not build with etcd $etcd_version and helm $helm_version; trying the next version"
    done
fi
[[ -n $tools_ok ]] || { log "could not build ${bins[*]} from any of: $k8s_versions"; exit 1; }

log "kube-apiserver $("$bin/kube-apiserver" --version 2>&1 | head -1)"
log "etcd $("$bin/etcd" --version 2>&1 | head -1)"
log "helm $("$bin/helm" version --short 2>&1 | head -1)"
if [[ -x $bin/kubectl ]]; then
    log "kubectl (built) $("$bin/kubectl" version --client 2>&1 | head -1)"
elif command -v kubectl >/dev/null; then
    log "kubectl ($(command -v kubectl)) $(kubectl version --client 2>&1 | head -1)"
fi
echo "$bin"

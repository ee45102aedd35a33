#!/usr/bin/env bash
# Builds (or reuses) kube-apiserver, etcd and helm (and kubectl when none is on PATH) from source
# through the Go module proxy into ${PMS_K8S_CACHE:-$HOME/.cache/pms/k8s}/bin, and prints that
# directory on stdout. Build logs go to stderr. A stamp file per binary records the pinned
# versions, so a rerun with the binaries in place does nothing.
#
# Each tool is built from its own throw-away module (under the cache dir), so their dependency
# graphs never mix. etcd and helm build in the background beside kubernetes, whose binaries are
# one `go build` (their packages compile once, their links run side by side): on a cold run the
# links after the shared compile are the tail of the critical path. kube-apiserver needs every k8s.io/<staging> module that kubernetes' own go.mod
# replaces with ./staging/src/k8s.io/<name> to be replaced by the published v0.X.Y of the same
# release; that list is read from the downloaded kubernetes go.mod.
#
# Overrides: PMS_K8S_VERSIONS (kubernetes versions to try, in order), PMS_ETCD_VERSION,
# PMS_HELM_VERSION, PMS_K8S_BUILD_KUBECTL=1 (build kubectl even if one is on PATH),
# PMS_K8S_NODE=1 (also kubelet, kube-controller-manager and kube-scheduler, for a real
# single-node cluster: scripts/k8s-cluster.sh).
set -euo pipefail

cache=${PMS_K8S_CACHE:-$HOME/.cache/pms/k8s}
bin=$cache/bin
k8s_versions=${PMS_K8S_VERSIONS:-v1.36.3 v1.36.1}
etcd_version=${PMS_ETCD_VERSION:-v3.6.16}
helm_version=${PMS_HELM_VERSION:-v3.22.0}
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

# go_build DIR OUT PKG [LDFLAGS_EXTRA]
go_build() {
    local dir=$1 out=$2 pkg=$3 extra=${4:-}
    local start=$SECONDS
    log "building $pkg -> $bin/$out"
    (cd "$dir" && "${nice_cmd[@]}" go build -trimpath -ldflags="-s -w $extra" -o "$bin/$out.tmp" "$pkg") >&2
    mv -f "$bin/$out.tmp" "$bin/$out"
    log "built $out in $((SECONDS - start)) s ($(du -h "$bin/$out" | cut -f1))"
}

# --- etcd and helm: their own modules, built in the background beside kubernetes ------------
build_etcd() {
    etcd_stamp="go.etcd.io/etcd/server/v3@$etcd_version $go_version"
    if ! up_to_date etcd "$etcd_stamp"; then
        dir=$cache/src/etcd
        new_module "$dir" pms.local/etcd-build
        # etcd server entry point, the same as etcd's own main.
        printf '%s\n' 'package main' '' 'import (' '	"os"' '' '	"go.etcd.io/etcd/server/v3/etcdmain"' ')' '' \
            'func main() { etcdmain.Main(os.Args) }' >"$dir/main.go"
        (cd "$dir" && go mod edit -require="go.etcd.io/etcd/server/v3@$etcd_version") >&2
        go_build "$dir" etcd . "-X go.etcd.io/etcd/api/v3/version.GitSHA=${etcd_version}"
        echo "$etcd_stamp" >"$bin/etcd.stamp"
    fi
}

build_helm() {
    helm_stamp="helm.sh/helm/v3@$helm_version $go_version"
    if ! up_to_date helm "$helm_stamp"; then
        dir=$cache/src/helm
        new_module "$dir" pms.local/helm-build
        (cd "$dir" && go mod edit -require="helm.sh/helm/v3@$helm_version" && go mod download helm.sh/helm/v3) >&2
        # Helm's Makefile derives the default Kubernetes version from the client-go it uses.
        cgo=$(cd "$dir" && go list -m -f '{{.Version}}' k8s.io/client-go 2>/dev/null || true)
        x="-X helm.sh/helm/v3/internal/version.version=$helm_version -X helm.sh/helm/v3/internal/version.metadata="
        if [[ $cgo =~ ^v0\.([0-9]+)\. ]]; then
            kmin=${BASH_REMATCH[1]}
            for p in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
                x+=" -X $p.k8sVersionMajor=1 -X $p.k8sVersionMinor=$kmin"
            done
        fi
        go_build "$dir" helm helm.sh/helm/v3/cmd/helm "$x"
        echo "$helm_stamp" >"$bin/helm.stamp"
    fi
}

# --- kubernetes: kube-apiserver (+ kubectl when missing) -------------------------------------
want_kubectl=${PMS_K8S_BUILD_KUBECTL:-}
if [[ -z $want_kubectl ]] && ! command -v kubectl >/dev/null; then want_kubectl=1; fi
node_bins=()
if [[ -n ${PMS_K8S_NODE:-} ]]; then node_bins=(kube-controller-manager kube-scheduler kubelet); fi

k8s_stamp() { echo "k8s.io/kubernetes@$1 $go_version"; }

build_kubernetes() {
    local v=$1 dir=$cache/src/kubernetes
    local json gomod sv
    json=$(cd "$cache" && GOFLAGS= go mod download -json "k8s.io/kubernetes@$v") || return 1
    gomod=$(sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p' <<<"$json")
    [[ -f $gomod ]] || { log "no go.mod for k8s.io/kubernetes@$v"; return 1; }
    sv=v0.${v#v1.} # staging modules are published as v0.<minor>.<patch>
    new_module "$dir" pms.local/k8s-build
    {
        printf '\nrequire k8s.io/kubernetes %s\n\nreplace (\n' "$v"
        awk '$2 == "=>" && $3 ~ /^\.\/staging\/src\// { printf "\t%s => %s %s\n", $1, $1, V }' V="$sv" "$gomod"
        printf ')\n'
    } >>"$dir/go.mod"
    log "k8s.io/kubernetes@$v: replacing $(grep -c '=> k8s.io/' "$dir/go.mod") staging modules with $sv"
    local x="-X k8s.io/component-base/version.gitVersion=$v -X k8s.io/client-go/pkg/version.gitVersion=$v"
    local maj=${v#v}; maj=${maj%%.*}
    local min=${v#v*.}; min=${min%%.*}
    x+=" -X k8s.io/component-base/version.gitMajor=$maj -X k8s.io/client-go/pkg/version.gitMajor=$maj"
    x+=" -X k8s.io/component-base/version.gitMinor=$min -X k8s.io/client-go/pkg/version.gitMinor=$min"
    x+=" -X k8s.io/component-base/version.gitTreeState=clean -X k8s.io/client-go/pkg/version.gitTreeState=clean"
    # One `go build` of every binary: their packages compile once and the links (the slow,
    # single-threaded part) run side by side.
    local bins=(kube-apiserver "${node_bins[@]}")
    [[ -z $want_kubectl ]] || bins+=(kubectl)
    local pkgs=() b start=$SECONDS out=$bin/.new
    for b in "${bins[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$b"); done
    rm -rf "$out" && mkdir -p "$out"
    log "building ${bins[*]} -> $bin"
    (cd "$dir" && "${nice_cmd[@]}" go build -trimpath -ldflags="-s -w $x" -o "$out/" "${pkgs[@]}") >&2 || return 1
    for b in "${bins[@]}"; do
        mv -f "$out/$b" "$bin/$b"
        echo "$(k8s_stamp "$v")" >"$bin/$b.stamp"
    done
    rmdir "$out"
    log "built ${bins[*]} in $((SECONDS - start)) s"
}

build_etcd &
etcd_pid=$!
build_helm &
helm_pid=$!

k8s_ok=
for v in $k8s_versions; do
    all=1
    for b in "${node_bins[@]}"; do up_to_date "$b" "$(k8s_stamp "$v")" || all=; done
    if [[ -n $all ]] && up_to_date kube-apiserver "$(k8s_stamp "$v")" &&
        { [[ -z $want_kubectl ]] || up_to_date kubectl "$(k8s_stamp "$v")"; }; then
        k8s_ok=$v
        break
    fi
done
if [[ -z $k8s_ok ]]; then
    for v in $k8s_versions; do
        if build_kubernetes "$v"; then k8s_ok=$v; break; fi
        log "k8s.io/kubernetes@$v did not build; trying the next version"
    done
fi
[[ -n $k8s_ok ]] || { log "could not build kube-apiserver from any of: $k8s_versions"; exit 1; }
wait "$etcd_pid" || { log "etcd did not build"; exit 1; }
wait "$helm_pid" || { log "helm did not build"; exit 1; }

log "kube-apiserver $("$bin/kube-apiserver" --version 2>&1 | head -1)"
log "etcd $("$bin/etcd" --version 2>&1 | head -1)"
log "helm $("$bin/helm" version --short 2>&1 | head -1)"
if [[ -x $bin/kubectl ]]; then
    log "kubectl (built) $("$bin/kubectl" version --client 2>&1 | head -1)"
elif command -v kubectl >/dev/null; then
    log "kubectl ($(command -v kubectl)) $(kubectl version --client 2>&1 | head -1)"
fi
echo "$bin"

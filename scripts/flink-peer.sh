#!/usr/bin/env bash
# The benchmark's Flink peer (bench/flink): the Flink SQL job users run today,
# INSERT INTO mysql_table SELECT * FROM paimon_table, in a local MiniCluster.
#   scripts/flink-peer.sh build        → builds it; jar and classpath under ~/.cache/pms/flink-peer
#                                        exit 3 with "flink peer skipped: …" if Maven can't resolve it
#   scripts/flink-peer.sh run ARGS…    → execs java on it (ARGS: see FlinkPeer.java), so the
#                                        caller's child is the JVM itself (wait4 measures it)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PROJ="$ROOT/bench/flink"
OUT="$HOME/.cache/pms/flink-peer"   # the pom's build directory is $OUT/target
JAR="$OUT/target/pms-flink-peer.jar"
CP="$OUT/classpath.txt"

mvn_build() {
    # package, then the dependency classpath (no shading: a few seconds instead of a minute).
    # (The plugin by its coordinates: a prefix can't be looked up without a repository.)
    (cd "$PROJ" && mvn -B -q -Dstyle.color=never "$@" package \
        org.apache.maven.plugins:maven-dependency-plugin:3.6.1:build-classpath \
        -Dmdep.outputFile="$CP")
}

build() {
    mkdir -p "$OUT"
    local log="$OUT/build.log"
    if mvn_build -o >"$log" 2>&1; then return 0; fi
    echo "flink-peer: offline build failed, retrying online" >&2
    if mvn_build >"$log" 2>&1; then return 0; fi
    # Unresolvable artifacts or plugins (no Maven Central) are a skip; anything else (a compile
    # error) fails.
    if grep -qE "Could not (resolve|transfer|find artifact)|Non-resolvable|No plugin found|Unknown ?host|Network is unreachable" "$log"; then
        reason=$(sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -m1 '^\[ERROR\]' | cut -c9-400)
        echo "flink peer skipped: Maven could not resolve the build: $reason (log: $log)" >&2
        exit 3
    fi
    cat "$log" >&2
    echo "flink-peer: build failed (see above)" >&2
    exit 1
}

case "${1:-}" in
build)
    build
    ;;
run)
    shift
    [[ -f "$JAR" && -f "$CP" ]] || { echo "flink-peer: not built; run scripts/flink-peer.sh build" >&2; exit 1; }
    # Java 17 closes the JDK internals Flink's serializers and memory manager reach into.
    exec java ${PMS_FLINK_JAVA_OPTS:-} -Duser.timezone=UTC -Dfile.encoding=UTF-8 \
        -XX:+IgnoreUnrecognizedVMOptions \
        --add-exports=java.base/sun.net.util=ALL-UNNAMED \
        --add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED \
        --add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED \
        --add-opens=java.base/java.lang=ALL-UNNAMED \
        --add-opens=java.base/java.lang.reflect=ALL-UNNAMED \
        --add-opens=java.base/java.io=ALL-UNNAMED \
        --add-opens=java.base/java.net=ALL-UNNAMED \
        --add-opens=java.base/java.nio=ALL-UNNAMED \
        --add-opens=java.base/sun.nio.ch=ALL-UNNAMED \
        --add-opens=java.base/java.text=ALL-UNNAMED \
        --add-opens=java.base/java.time=ALL-UNNAMED \
        --add-opens=java.base/java.util=ALL-UNNAMED \
        --add-opens=java.base/java.util.concurrent=ALL-UNNAMED \
        --add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED \
        --add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED \
        -cp "$JAR:$(cat "$CP")" io.paimonsync.bench.FlinkPeer "$@"
    ;;
*)
    echo "usage: scripts/flink-peer.sh build | run ARGS…" >&2
    exit 2
    ;;
esac

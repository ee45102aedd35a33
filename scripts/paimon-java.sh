#!/usr/bin/env bash
# Runs the Java reference Paimon writer/reader (tests/paimon-java), building it first if
# the shaded jar is missing or older than its sources. All arguments go to the tool:
#   scripts/paimon-java.sh write script.json
#   scripts/paimon-java.sh read <warehouse> <db> <table> [--snapshot S]
#   scripts/paimon-java.sh latest|snapshots <warehouse> <db> <table>
#   scripts/paimon-java.sh expire <warehouse> <db> <table> --retain-max N
# stdout carries only the tool's JSON output; build output and logs go to stderr.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PROJ="$ROOT/tests/paimon-java"
JAR="$PROJ/target/pms-paimon-fixtures.jar"

needs_build() {
    [[ ! -f "$JAR" ]] && return 0
    [[ -n "$(find "$PROJ/pom.xml" "$PROJ/src" -type f -newer "$JAR" -print -quit)" ]]
}

if needs_build; then
    echo "paimon-java: building $JAR" >&2
    # Serialise concurrent builds (tests may start several invocations at once).
    exec 9>"$PROJ/.build.lock"
    flock 9
    if needs_build; then
        if ! (cd "$PROJ" && mvn -B -q -Dstyle.color=never -o package) >&2 2>&1; then
            echo "paimon-java: offline build failed, retrying online" >&2
            (cd "$PROJ" && mvn -B -q -Dstyle.color=never package) >&2 2>&1
        fi
    fi
    flock -u 9
fi

exec java ${PMS_JAVA_OPTS:-} -Duser.timezone=UTC -Dfile.encoding=UTF-8 \
    -XX:+IgnoreUnrecognizedVMOptions \
    --add-opens=java.base/java.nio=ALL-UNNAMED \
    --add-opens=java.base/sun.nio.ch=ALL-UNNAMED \
    --add-opens=java.base/java.lang=ALL-UNNAMED \
    --add-opens=java.base/java.util=ALL-UNNAMED \
    -jar "$JAR" "$@"

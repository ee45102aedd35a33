#!/usr/bin/env bash
# Runs the Java reference Paimon writer/reader (tests/paimon-java), building it first if
# the shaded jar is missing or older than its sources. All arguments go to the tool:
#   scripts/paimon-java.sh write script.json
#   scripts/paimon-java.sh read <warehouse> <db> <table> [--snapshot S]
#   scripts/paimon-java.sh latest|snapshots <warehouse> <db> <table>
#   scripts/paimon-java.sh expire <warehouse> <db> <table> --retain-max N
# stdout carries only the tool's JSON output; build output and logs go to stderr.
#
# Each call is a short-lived JVM, and the tests make hundreds of them: the JVM runs with the client
# compiler only and the serial collector, and maps a class-data archive (AppCDS, made from one
# training write right after the jar is built) instead of loading and verifying Paimon's and
# Hadoop's classes anew. A small write takes about 1.6 CPU-seconds instead of 4, a read 1 instead
# of 3.3. PMS_JAVA_OPTS comes last, so it overrides any of these (e.g. -XX:TieredStopAtLevel=4 for
# a long generation run).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PROJ="$ROOT/tests/paimon-java"
JAR="$PROJ/target/pms-paimon-fixtures.jar"
CDS="$JAR.jsa"

needs_build() {
    [[ ! -f "$JAR" ]] && return 0
    [[ -n "$(find "$PROJ/pom.xml" "$PROJ/src" -type f -newer "$JAR" -print -quit)" ]]
}

# JVM warnings (a class-data archive that no longer matches, say) go to stderr, never into the
# JSON on stdout.
jvm_opts=(-Xlog:disable -Xlog:all=warning:stderr -XX:TieredStopAtLevel=1 -XX:+UseSerialGC
    -XX:-UsePerfData -Duser.timezone=UTC -Dfile.encoding=UTF-8
    -XX:+IgnoreUnrecognizedVMOptions
    --add-opens=java.base/java.nio=ALL-UNNAMED
    --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
    --add-opens=java.base/java.lang=ALL-UNNAMED
    --add-opens=java.base/java.util=ALL-UNNAMED)

# The class-data archive: one training write of a small table, its classes archived at exit.
make_cds() {
    local dir
    dir=$(mktemp -d "${TMPDIR:-/tmp}/pms-paimon-cds.XXXXXX")
    sed -e "s#@WAREHOUSE@#$dir/warehouse#" -e "s#@TABLE@#t#" -e 's#@OPTIONS@#{"bucket": "2"}#' \
        "$PROJ/scenarios/changelog.json" >"$dir/script.json"
    if java "${jvm_opts[@]}" -XX:ArchiveClassesAtExit="$dir/app.jsa" -jar "$JAR" write "$dir/script.json" >/dev/null 2>&1 &&
        [[ -s $dir/app.jsa ]]; then
        mv -f "$dir/app.jsa" "$CDS"
    else
        echo "paimon-java: no class-data archive (the calls work, only slower)" >&2
    fi
    rm -rf "$dir"
}

if needs_build || [[ ! -f $CDS ]]; then
    # Serialise concurrent builds (tests may start several invocations at once).
    exec 9>"$PROJ/.build.lock"
    flock 9
    if needs_build; then
        echo "paimon-java: building $JAR" >&2
        rm -f "$CDS"
        if ! (cd "$PROJ" && mvn -B -q -Dstyle.color=never -o package) >&2 2>&1; then
            echo "paimon-java: offline build failed, retrying online" >&2
            (cd "$PROJ" && mvn -B -q -Dstyle.color=never package) >&2 2>&1
        fi
    fi
    [[ -f $CDS ]] || make_cds
    flock -u 9
fi

[[ -f $CDS ]] && jvm_opts+=(-XX:SharedArchiveFile="$CDS")
# shellcheck disable=SC2086 # PMS_JAVA_OPTS is a list of options
exec java "${jvm_opts[@]}" ${PMS_JAVA_OPTS:-} -jar "$JAR" "$@"

#!/usr/bin/env bash
# Runs a command with one long-lived Java reference server (`scripts/paimon-java.sh serve`):
# PMS_PAIMON_JAVA_SOCKET is set for it, and the tests send their Paimon Java calls there instead
# of starting a JVM for each (tests/src/paimon.rs). A suite makes thousands of calls, and a JVM
# started per call spends most of its CPU starting. The server reads the pipe this script holds
# as its stdin, and exits when it closes: when the command ends, however it ends.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/pms-paimon-java.XXXXXX")
socket=$dir/serve.sock
# A server living for the whole suite: the full compiler, and room for many tables at once.
exec 3> >(PMS_JAVA_OPTS="-XX:TieredStopAtLevel=4 -Xmx6g ${PMS_JAVA_OPTS:-}" \
    "$here/paimon-java.sh" serve "$socket" >"$dir/server.log" 2>&1)
server=$!
cleanup() {
    exec 3>&-
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT
# The first call may build the jar (minutes on a fresh machine).
for _ in $(seq 1 600); do
    [ -S "$socket" ] && break
    if ! kill -0 "$server" 2>/dev/null; then
        echo "with-paimon-java: the Java reference server did not start:" >&2
        cat "$dir/server.log" >&2
        exit 1
    fi
    sleep 0.5
done
[ -S "$socket" ] || { echo "with-paimon-java: no socket after 300 s:" >&2; cat "$dir/server.log" >&2; exit 1; }
export PMS_PAIMON_JAVA_SOCKET=$socket
echo "with-paimon-java: the Java reference server at $socket" >&2
set +e
# Without the pipe: a daemon the command leaves running (the test cluster's kubelet, stopped by
# an outer wrapper) must not keep the server's stdin open.
"$@" 3>&-
rc=$?
if grep -q "failed to be answered" "$dir/server.log"; then
    echo "with-paimon-java: the server's log:" >&2
    cat "$dir/server.log" >&2
fi
exit $rc

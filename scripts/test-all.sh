#!/usr/bin/env bash
# The whole suite (`make test`'s last phase), in three streams at once: the two end-to-end tests
# (the operator against an API server, and a real single-node cluster) mostly wait on
# controllers, pods and timeouts, so each runs beside the rest of the suite, which keeps the
# cores busy. The streams share the servers the with-*.sh wrappers started (each test has its
# own databases, namespaces and clusters). Arguments: cargo features (`--features …`).
# Every test binary runs with libtest's per-test times (scripts/test-runner.sh); at the end the
# time table (scripts/test-times.py) prints each binary's and the ten slowest tests' seconds,
# and fails a binary past its budget (tests/time-budget.txt) by more than half.
# Exits non-zero when any stream failed or a budget was broken.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
logs=$(mktemp -d "${TMPDIR:-/tmp}/pms-tests.XXXXXX")
trap 'rm -rf "$logs"' EXIT
export CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER=$here/test-runner.sh
for e2e in operator_e2e cluster_e2e; do
    cargo test -p pms-tests "$@" --test "$e2e" >"$logs/$e2e.log" 2>&1 &
    eval "pid_$e2e=$!"
done
cargo test --workspace --no-fail-fast "$@" -- --exact --skip operator_end_to_end --skip on_a_real_cluster 2>&1 |
    tee "$logs/rest.log"
rest=${PIPESTATUS[0]}
rc=$rest
for e2e in operator_e2e cluster_e2e; do
    pid_var=pid_$e2e
    wait "${!pid_var}"
    e2e_rc=$?
    echo "test-all: $e2e, run beside the rest (exit $e2e_rc):"
    cat "$logs/$e2e.log"
    [ "$e2e_rc" -eq 0 ] || rc=$e2e_rc
done
echo "test-all: the rest exited $rest; overall $rc"
python3 "$here/test-times.py" "$here/../tests/time-budget.txt" "$logs"/*.log || rc=1
exit "$rc"

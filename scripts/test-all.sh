#!/usr/bin/env bash
# The whole suite (`make test`'s last phase), in two streams at once: the two end-to-end tests
# (the operator against an API server, and a real single-node cluster) mostly wait on
# controllers, pods and timeouts, so they run beside the rest of the suite, which keeps the
# cores busy. Both streams share the servers the with-*.sh wrappers started (each test has its
# own databases, namespaces and clusters). Arguments: cargo features (`--features …`).
# Exits non-zero when either stream failed; the end-to-end output follows the rest.
set -uo pipefail
e2e_log=$(mktemp "${TMPDIR:-/tmp}/pms-e2e-tests.XXXXXX")
trap 'rm -f "$e2e_log"' EXIT
cargo test -p pms-tests "$@" --test operator_e2e --test cluster_e2e >"$e2e_log" 2>&1 &
e2e=$!
cargo test --workspace --no-fail-fast "$@" -- --exact --skip operator_end_to_end --skip on_a_real_cluster
rest=$?
wait "$e2e"
e2e_rc=$?
echo "test-all: the end-to-end tests, run beside the rest (exit $e2e_rc):"
cat "$e2e_log"
echo "test-all: the rest exited $rest, the end-to-end tests $e2e_rc"
[ "$rest" -eq 0 ] && [ "$e2e_rc" -eq 0 ]

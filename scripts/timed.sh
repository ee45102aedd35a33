#!/usr/bin/env bash
# scripts/timed.sh PHASE CMD [ARG...]: runs CMD and prints how long it took, as
#   ci-phase: PHASE 123 s (started at +45 s, exit 0)
# on stderr, and appends the same line to $PMS_PHASE_LOG when it is set (.ci/run prints them all as a
# table at the end; under `make -j` the phases overlap, hence the start offset against
# $PMS_PHASE_T0, the epoch second the run started). Exits with CMD's status.
set -uo pipefail
phase=${1:?usage: timed.sh PHASE CMD [ARG...]}
shift
t0=${PMS_PHASE_T0:-$(date +%s)}
start=$(date +%s)
"$@"
rc=$?
line="ci-phase: $phase $(($(date +%s) - start)) s (started at +$((start - t0)) s, exit $rc)"
echo "$line" >&2
[ -n "${PMS_PHASE_LOG:-}" ] && echo "$line" >>"$PMS_PHASE_LOG"
exit $rc

#!/usr/bin/env bash
# Regenerates examples/warehouse (database shop, table orders) with the Java reference writer:
#   snapshot 1: 100000 generated orders (+I, ids 1..100000)
#   snapshot 2: +U of every 10th id (1, 11, 21, ...; 10000 rows, salt 1)
#   snapshot 3: -D of every 100th id starting at 5 (5, 105, ...; 1000 rows)
# Expected result: 99000 rows. File names contain random UUIDs, so a rerun changes them.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
WH="$HERE/warehouse"
rm -rf "$WH"
SCRIPT="$(mktemp)"
trap 'rm -f "$SCRIPT"' EXIT
sed "s#@WAREHOUSE@#$WH#" "$HERE/sample-warehouse.json" > "$SCRIPT"
"$HERE/../scripts/paimon-java.sh" write "$SCRIPT"

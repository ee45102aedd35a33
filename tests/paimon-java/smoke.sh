#!/usr/bin/env bash
# Smoke test of the reference writer: all-types round trip + one table per changelog
# producer / deletion vectors / dynamic bucket (partitioned, 3 buckets, composite key).
# Prints snapshots (commit kinds), rows and changelog/index file counts. Usage: smoke.sh [dir]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
S="$HERE/../../scripts/paimon-java.sh"
DIR="${1:-$(mktemp -d)}"
WH="$DIR/warehouse"
echo "warehouse: $WH"

sed "s#@WAREHOUSE@#$WH#" "$HERE/scenarios/all-types.json" > "$DIR/all-types.json"
"$S" write "$DIR/all-types.json"
"$S" read "$WH" db all_types > "$DIR/all-types.out"
python3 - "$DIR/all-types.json" "$DIR/all-types.out" <<'PY'
import json, sys
script = json.load(open(sys.argv[1]))
want = sorted((r["values"] for r in script["commits"][0]["rows"]), key=lambda v: v[0])
got = [json.loads(l) for l in open(sys.argv[2])]
assert got == want, "all-types round trip differs:\n%s\n%s" % (want, got)
print("all-types: %d rows round-trip exactly" % len(got))
PY

run() {
    local name=$1 opts=$2
    sed "s#@WAREHOUSE@#$WH#; s#@TABLE@#$name#; s#@OPTIONS@#$opts#" \
        "$HERE/scenarios/changelog.json" > "$DIR/$name.json"
    echo "== $name $opts"
    echo "  write: $("$S" write "$DIR/$name.json" | tr '\n' ' ')"
    "$S" snapshots "$WH" db "$name" | python3 -c '
import sys, json
for l in sys.stdin:
    s = json.loads(l)
    print("  snapshot %d %-7s delta=%s changelog=%s%s%s" % (s["id"], s["commitKind"],
          s["deltaRecordCount"], s["changelogRecordCount"],
          " +changelog-manifest" if s["changelogManifestList"] else "",
          " +index-manifest" if s["indexManifest"] else ""))'
    "$S" read "$WH" db "$name" | sed 's/^/  /'
    echo "  changelog files: $(find "$WH/db.db/$name" -name 'changelog-*' | wc -l)," \
         "index files: $(find "$WH/db.db/$name/index" -type f 2>/dev/null | wc -l)"
}
run none '{"bucket":"3"}'
run input '{"bucket":"3","changelog-producer":"input"}'
run lookup '{"bucket":"3","changelog-producer":"lookup"}'
run full_compaction '{"bucket":"3","changelog-producer":"full-compaction"}'
run dv '{"bucket":"3","deletion-vectors.enabled":"true"}'
run dv_lookup '{"bucket":"3","deletion-vectors.enabled":"true","changelog-producer":"lookup"}'
run dynamic '{"bucket":"-1","changelog-producer":"input"}'

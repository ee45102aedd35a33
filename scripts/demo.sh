#!/usr/bin/env bash
# The demo: syncs the bundled sample Paimon table (examples/warehouse, written by Paimon Java)
# into a throw-away local MariaDB with the standalone worker, then shows what arrived.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${PMS_WORKER:-${CARGO_TARGET_DIR:-$HOME/.cache/pms/target}/demo/pms-worker}
[ -x "$bin" ] || { echo "demo: $bin is missing; run 'make demo' (it builds it)" >&2; exit 1; }

# A fresh Debian machine has no MariaDB: root installs it (a user is told how).
if ! command -v mariadbd >/dev/null 2>&1 && [ ! -x /usr/sbin/mariadbd ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "== installing MariaDB (apt-get install mariadb-server mariadb-client)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mariadb-server mariadb-client >/dev/null
  else
    echo "demo: MariaDB is missing: sudo apt-get install -y mariadb-server mariadb-client" >&2
    exit 1
  fi
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/pms-demo.XXXXXX")
cleanup() { "$root/scripts/mariadb.sh" stop "$work/mariadb" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT

echo "== starting a throw-away MariaDB"
port=$("$root/scripts/mariadb.sh" start "$work/mariadb")
sql() { mariadb --no-defaults -h127.0.0.1 -P"$port" -upms -ppms "$@"; }
sql -e "CREATE DATABASE demo CHARACTER SET utf8mb4"
sql demo < "$root/examples/orders.sql"

# A copy, so the consumer file the worker writes doesn't touch the repository.
cp -r "$root/examples/warehouse" "$work/warehouse"
# (Its paths are relative to it: the warehouse copy beside it is the one read.)
sed -e "s#127.0.0.1:3306#127.0.0.1:$port#" "$root/examples/sync.yaml" > "$work/sync.yaml"

echo "== pms-worker check --config sync.yaml   (the pre-flight: exit 0 = nothing is ✗)"
"$bin" check --config "$work/sync.yaml"
echo
echo "== pms-worker run --config sync.yaml --once   (MariaDB on 127.0.0.1:$port)"
start=$(date +%s.%N)
"$bin" run --config "$work/sync.yaml" --once
end=$(date +%s.%N)

rows=$(sql -N demo -e "SELECT COUNT(*) FROM orders")
echo
echo "== MySQL demo.orders now has $rows rows ($(python3 -c "print(f'{$rows/($end-$start):,.0f}')") rows/s end to end, process start included,
   with the unoptimised demo build: \`make release\` builds the production binary)"
sql -t demo -e "SELECT * FROM orders ORDER BY id LIMIT 5"
echo "checkpoint: $(tr -d '\n ' < "$work/pms-checkpoint.json")"
echo
echo "== pms-worker verify --config sync.yaml   (MySQL against the latest Paimon snapshot; exit 0 = equal)"
"$bin" verify --config "$work/sync.yaml"

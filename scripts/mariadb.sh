#!/usr/bin/env bash
# A throw-away MariaDB server on a free loopback port.
#   scripts/mariadb.sh start DIR   → starts it (data, socket, pid and port under DIR), prints the port
#   scripts/mariadb.sh stop DIR    → stops it by pid and removes DIR
#   scripts/mariadb.sh crash-restart DIR → kill -9, then the same server again on the same port and data
# A user pms/pms with all privileges is created for TCP clients. PMS_MARIADB_ARGS adds server
# options at start (e.g. "--default-time-zone=+05:00"); a crash-restart keeps them.
# PMS_MARIADB_BIND: the addresses to listen on (default 127.0.0.1; the real-cluster tests add the
# cluster's bridge address, so that pods reach it).
set -euo pipefail

cmd=${1:?usage: mariadb.sh start|stop DIR}
dir=${2:?usage: mariadb.sh start|stop DIR}

find_bin() {
  for b in "$@"; do
    if command -v "$b" >/dev/null 2>&1; then command -v "$b"; return 0; fi
    for d in /usr/sbin /usr/bin; do [ -x "$d/$b" ] && { echo "$d/$b"; return 0; }; done
  done
  return 1
}

server=$(find_bin mariadbd mysqld) || { echo "mariadb.sh: no MariaDB server found; install it with: apt-get install -y mariadb-server" >&2; exit 1; }
client=$(find_bin mariadb mysql) || { echo "mariadb.sh: mariadb client missing (apt-get install -y mariadb-client)" >&2; exit 1; }
user_opt=()
[ "$(id -u)" = 0 ] && user_opt=(--user=root)

# Starts the server on $dir's data and port, waits until it answers.
run_server() {
  local port=$1
  "$server" --no-defaults "${user_opt[@]}" --datadir="$dir/data" --tmpdir="$dir/tmp" --socket="$dir/mysqld.sock" --pid-file="$dir/mysqld.pid" \
    --port="$port" --bind-address="${PMS_MARIADB_BIND:-127.0.0.1}" --skip-name-resolve --log-error="$dir/error.log" \
    --innodb-buffer-pool-size=256M --innodb-flush-log-at-trx-commit=2 --max-connections=500 \
    --max-allowed-packet=64M --character-set-server=utf8mb4 --collation-server=utf8mb4_unicode_ci \
    $(cat "$dir/args" 2>/dev/null) >>"$dir/stdout.log" 2>&1 &
  echo $! >"$dir/server.pid"
  for _ in $(seq 1 300); do
    if "$client" --no-defaults -uroot --socket="$dir/mysqld.sock" -e "SELECT 1" >/dev/null 2>&1; then
      return 0
    fi
    if ! kill -0 "$(cat "$dir/server.pid")" 2>/dev/null; then
      echo "mariadb.sh: the server exited during start:" >&2; tail -20 "$dir/error.log" >&2; exit 1
    fi
    sleep 0.1
  done
  echo "mariadb.sh: the server did not answer within 30 s:" >&2; tail -20 "$dir/error.log" >&2; exit 1
}

case "$cmd" in
start)
  install_db=$(find_bin mariadb-install-db mysql_install_db) || { echo "mariadb.sh: mariadb-install-db missing (apt-get install -y mariadb-server)" >&2; exit 1; }
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  # A tmpdir of its own: servers installed at once in a shared /tmp lost each other's temporary
  # tables ("Could not remove temporary table … Unknown table 'mysql.tmp_proxies_priv'").
  mkdir -p "$dir/tmp"
  "$install_db" --no-defaults "${user_opt[@]}" --datadir="$dir/data" --tmpdir="$dir/tmp" --auth-root-authentication-method=normal \
    --skip-test-db >"$dir/install.log" 2>&1 || { cat "$dir/install.log" >&2; exit 1; }
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
  echo "$port" >"$dir/port"
  echo "${PMS_MARIADB_ARGS:-}" >"$dir/args"
  run_server "$port"
  "$client" --no-defaults -uroot --socket="$dir/mysqld.sock" -e \
    "CREATE USER IF NOT EXISTS 'pms'@'%' IDENTIFIED BY 'pms'; GRANT ALL ON *.* TO 'pms'@'%' WITH GRANT OPTION; FLUSH PRIVILEGES;"
  echo "$port"
  ;;
crash-restart)
  kill -9 "$(cat "$dir/server.pid")" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$(cat "$dir/server.pid")" 2>/dev/null || break; sleep 0.1; done
  sleep "${PMS_RESTART_DOWNTIME:-1}"
  run_server "$(cat "$dir/port")"
  ;;
stop)
  if [ -f "$dir/server.pid" ]; then
    pid=$(cat "$dir/server.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -rf "$dir"
  ;;
*) echo "usage: mariadb.sh start|stop DIR" >&2; exit 2 ;;
esac

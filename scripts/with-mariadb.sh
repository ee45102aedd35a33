#!/usr/bin/env bash
# Runs a command with a throw-away MariaDB server: PMS_TEST_MYSQL_PORT and PMS_TEST_MYSQL_SOCKET
# are set for it, and the server is stopped (by pid) when the command ends, however it ends.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/pms-mariadb.XXXXXX")
trap '"$here/mariadb.sh" stop "$dir"' EXIT
port=$("$here/mariadb.sh" start "$dir")
export PMS_TEST_MYSQL_PORT=$port PMS_TEST_MYSQL_SOCKET=$dir/mysqld.sock PMS_TEST_MYSQL_DIR=$dir
echo "with-mariadb: MariaDB on 127.0.0.1:$port (user pms/pms)" >&2
"$@"

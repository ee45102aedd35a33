# Sourced by the scripts that start throw-away servers.
# stop_pid FILE [SECONDS]: TERM the process named in FILE, KILL it if it is still there after
# SECONDS (default 5). A missing file or a process already gone is fine.
stop_pid() {
  [ -f "$1" ] || return 0
  local pid
  pid=$(cat "$1")
  [ -n "$pid" ] || return 0
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 $((${2:-5} * 10))); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
}

#!/usr/bin/env bash
# Runs a command with a throw-away HDFS: Hadoop's MiniDFSCluster (tests/hdfs, one namenode and two
# datanodes on 127.0.0.1, permission checks off) in a fresh directory. PMS_TEST_HDFS
# (hdfs://127.0.0.1:PORT) is set for the command, and the JVM is stopped when the command ends,
# however it ends: its stdin is a pipe that only this script holds open, so even a kill -9 of the
# script makes it shut down.
#   scripts/with-hdfs.sh CMD ARGS...     PMS_HDFS_PORT=N picks the namenode port (default: a free one)
#   scripts/with-hdfs.sh --build-only    only builds the jar (make test does it beside cargo)
# HADOOP_CONF_DIR (unless already set) and PMS_TEST_HDFS_CONF_DIR name a client configuration
# (hdfs-site.xml) that both Paimon Java (tests/paimon-java) and the Rust client (hdfs-native) read:
# the Java client's first retry of a file's close comes after 10 ms instead of 400 ms (a Paimon
# Java commit writes several small files: about 2.5 s instead of 5-7 s for a two-commit script). It
# holds no fs.defaultFS, so paths without a scheme stay local.
# The jar (tests/hdfs/target/pms-mini-hdfs.jar) is built first when it is missing or older than
# its sources: offline, then online (cold: ~15 s and ~100 MB into ~/.m2, the Hadoop client jars
# shared with tests/paimon-java). PMS_HDFS_JAVA_OPTS adds JVM options.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
proj="$here/../tests/hdfs"
jar="$proj/target/pms-mini-hdfs.jar"

needs_build() {
  [[ ! -f $jar ]] && return 0
  [[ -n "$(find "$proj/pom.xml" "$proj/src" -type f -newer "$jar" -print -quit)" ]]
}
if needs_build; then
  # Serialise concurrent builds.
  exec 9>"$proj/.build.lock"
  flock 9
  if needs_build; then
    echo "with-hdfs: building $jar" >&2
    if ! (cd "$proj" && mvn -B -q -Dstyle.color=never -o package) >&2 2>&1; then
      echo "with-hdfs: offline build failed, retrying online" >&2
      (cd "$proj" && mvn -B -q -Dstyle.color=never package) >&2 2>&1
    fi
  fi
  flock -u 9
  exec 9>&-
fi
[[ ${1:-} != --build-only ]] || exit 0

# shellcheck source=lib/stop-pid.sh
. "$here/lib/stop-pid.sh"
dir=$(mktemp -d "${TMPDIR:-/tmp}/pms-hdfs.XXXXXX")
cleanup() {
  exec 8>&- 2>/dev/null || true   # EOF on the JVM's stdin: it shuts the cluster down and exits
  stop_pid "$dir/pid" 15
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

mkfifo "$dir/stdin"
# shellcheck disable=SC2086 # PMS_HDFS_JAVA_OPTS is a list of options
java -Xmx512m -XX:+UseSerialGC -XX:-UsePerfData -Xlog:disable -Xlog:all=warning:stderr \
  -Djava.net.preferIPv4Stack=true ${PMS_HDFS_JAVA_OPTS:-} \
  -jar "$jar" "$dir/data" "${PMS_HDFS_PORT:-0}" <"$dir/stdin" >"$dir/uri" 2>"$dir/log" &
echo $! >"$dir/pid"
exec 8>"$dir/stdin"   # blocks until the JVM has opened its end

uri=
for _ in $(seq 1 1200); do
  uri=$(head -n1 "$dir/uri" 2>/dev/null || true)
  [[ $uri == hdfs://* ]] && break
  uri=
  kill -0 "$(cat "$dir/pid")" 2>/dev/null || break
  sleep 0.1
done
if [[ -z $uri ]]; then
  echo "with-hdfs: MiniDFSCluster did not start within 120 s; its log:" >&2
  tail -40 "$dir/log" >&2
  exit 1
fi
mkdir -p "$dir/conf"
cat >"$dir/conf/hdfs-site.xml" <<'XML'
<?xml version="1.0"?>
<configuration>
  <property>
    <name>dfs.client.block.write.locateFollowingBlock.initial.delay.ms</name>
    <value>10</value>
  </property>
  <!-- The delay doubles at each retry: 12 wait up to ~40 s for a block's replica to be
       reported under load (the default 5 give up after 0.3 s with the short delay above:
       "Unable to close file because the last block does not have enough number of replicas"). -->
  <property>
    <name>dfs.client.block.write.locateFollowingBlock.retries</name>
    <value>12</value>
  </property>
</configuration>
XML
export PMS_TEST_HDFS=$uri
export PMS_TEST_HDFS_CONF_DIR=$dir/conf
export HADOOP_CONF_DIR=${HADOOP_CONF_DIR:-$dir/conf}
echo "with-hdfs: HDFS (MiniDFSCluster) at $uri" >&2
# The command gets no handle on the JVM's stdin (fd 8), so a daemon it leaves behind cannot keep
# the cluster alive.
"$@" 8>&-

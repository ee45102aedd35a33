#!/usr/bin/env bash
# Runs a command with throw-away HDFS clusters in a fresh directory, from Hadoop's MiniDFSCluster
# (tests/hdfs): in one JVM a plain one (one namenode and two datanodes on 127.0.0.1, permission
# checks off; PMS_TEST_HDFS=hdfs://127.0.0.1:PORT) and an HA pair of namenodes (PMS_TEST_HDFS_HA,
# failed over on request through PMS_TEST_HDFS_CONTROL); in a second JVM a Kerberized one with its
# KDC (MiniKdc; PMS_TEST_KERBEROS_*). Both JVMs stop when the command ends, however it ends: their
# stdin is a pipe that only this script holds open, so even a kill -9 of the script shuts them down.
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
  # EOF on the JVMs' stdin: they shut their clusters down and exit.
  exec 8>&- 2>/dev/null || true
  exec 7>&- 2>/dev/null || true
  stop_pid "$dir/pid" 15
  stop_pid "$dir/kerberos/pid" 15
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

# start_jvm DIR ARGS...: the jar with ARGS, its stdin the fifo DIR/stdin, stdout DIR/out.
start_jvm() {
  local d=$1
  shift
  mkdir -p "$d"
  mkfifo "$d/stdin"
  # shellcheck disable=SC2086 # PMS_HDFS_JAVA_OPTS is a list of options
  java -Xmx768m -XX:+UseSerialGC -XX:-UsePerfData -Xlog:disable -Xlog:all=warning:stderr \
    -Djava.net.preferIPv4Stack=true ${PMS_HDFS_JAVA_OPTS:-} \
    -jar "$jar" "$@" <"$d/stdin" >"$d/out" 2>"$d/log" &
  echo $! >"$d/pid"
}
# wait_for DIR LINES: until DIR/out has LINES lines (the JVM's "up" lines); fails with its log.
wait_for() {
  for _ in $(seq 1 1200); do
    [[ $(grep -c . "$1/out" 2>/dev/null || true) -ge $2 ]] && return 0
    kill -0 "$(cat "$1/pid")" 2>/dev/null || break
    sleep 0.1
  done
  echo "with-hdfs: the MiniDFSCluster of $1 did not start within 120 s; its log:" >&2
  tail -40 "$1/log" >&2
  exit 1
}
# The plain cluster and the HA pair in one JVM; the Kerberized cluster and its KDC in another
# (Hadoop's login is per JVM). They start side by side.
start_jvm "$dir" "$dir/data" "${PMS_HDFS_PORT:-0}"
exec 8>"$dir/stdin"   # blocks until the JVM has opened its end
start_jvm "$dir/kerberos" --kerberos "$dir/kerberos"
exec 7>"$dir/kerberos/stdin"
wait_for "$dir" 2
wait_for "$dir/kerberos" 1
uri=$(sed -n 1p "$dir/out")
ha=$(sed -n 2p "$dir/out")
read -r kerberos_uri kerberos_principal <"$dir/kerberos/out"
# "ha NAMESERVICE nn1=HOST:PORT nn2=HOST:PORT"
read -r _ ns nn1 nn2 <<<"$ha"
mkdir -p "$dir/conf"
cat >"$dir/conf/hdfs-site.xml" <<XML
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
  <!-- The HA pair, as a company's hdfs-site.xml names its nameservice. -->
  <property><name>dfs.nameservices</name><value>$ns</value></property>
  <property><name>dfs.ha.namenodes.$ns</name><value>nn1,nn2</value></property>
  <property><name>dfs.namenode.rpc-address.$ns.nn1</name><value>${nn1#nn1=}</value></property>
  <property><name>dfs.namenode.rpc-address.$ns.nn2</name><value>${nn2#nn2=}</value></property>
  <property>
    <name>dfs.client.failover.proxy.provider.$ns</name>
    <value>org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider</value>
  </property>
</configuration>
XML
export PMS_TEST_HDFS=$uri
# The HA pair: hdfs://NAMESERVICE, resolved through hdfs-site.xml above. A test makes it fail over
# by writing "failover" to PMS_TEST_HDFS_CONTROL (the JVM's stdin) and waits for the line
# "failover N active=nnX" in PMS_TEST_HDFS_EVENTS.
export PMS_TEST_HDFS_HA=hdfs://$ns
export PMS_TEST_HDFS_CONTROL=$dir/stdin
export PMS_TEST_HDFS_EVENTS=$dir/out
# The Kerberized cluster: a client logs in as PMS_TEST_KERBEROS_PRINCIPAL from the keytab, with
# the MIT krb5.conf and the Hadoop configuration (hadoop.security.authentication kerberos) given.
# A test copies a local directory there by writing "put LOCAL_DIR HDFS_PATH" to
# PMS_TEST_KERBEROS_CONTROL and waiting for "put N done" in PMS_TEST_KERBEROS_EVENTS.
export PMS_TEST_KERBEROS_HDFS=$kerberos_uri
export PMS_TEST_KERBEROS_PRINCIPAL=$kerberos_principal
export PMS_TEST_KERBEROS_KEYTAB=$dir/kerberos/client.keytab
export PMS_TEST_KERBEROS_KRB5_CONF=$dir/kerberos/krb5.conf
export PMS_TEST_KERBEROS_CONF_DIR=$dir/kerberos/conf
export PMS_TEST_KERBEROS_CONTROL=$dir/kerberos/stdin
export PMS_TEST_KERBEROS_EVENTS=$dir/kerberos/out
export PMS_TEST_HDFS_CONF_DIR=$dir/conf
export HADOOP_CONF_DIR=${HADOOP_CONF_DIR:-$dir/conf}
echo "with-hdfs: HDFS (MiniDFSCluster) at $uri, an HA pair at hdfs://$ns, a Kerberized one at $kerberos_uri" >&2
# The command gets no handle on the JVM's stdin (fd 8), so a daemon it leaves behind cannot keep
# the cluster alive.
"$@" 8>&- 7>&-

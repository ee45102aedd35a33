package io.paimonsync.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.catalog.ResolvedSchema;

/**
 * The benchmark's "seed" peer: what users run today with Flink SQL,
 * {@code INSERT INTO mysql_table SELECT * FROM paimon_table}, in a local MiniCluster of
 * parallelism 1.
 *
 * <pre>
 * --warehouse DIR --database DB --table T --jdbc-url jdbc:mysql://127.0.0.1:PORT/DB
 * --user U --password P --target MYSQL_TABLE --max-rows N
 * --mode full|incremental [--from-snapshot S] [--discovery-interval 1s]
 * </pre>
 *
 * full: BATCH mode, reads the latest snapshot whole and exits 0 when every row is flushed.
 * incremental: STREAMING mode from snapshot S (scan.mode=from-snapshot: the changes of S and
 * later, not the state at S); it never ends by itself, the caller kills it.
 * job: the production job the take-over test replaces: STREAMING, scan.mode=latest-full with
 * --consumer-id ID, checkpoints every --checkpoint-interval (default 1s; the JDBC sink flushes
 * at each, then Paimon writes the consumer file). It prints "running JOB_ID", then reads its
 * stdin: "stop DIR" stops it with a savepoint into DIR, prints "stopped SAVEPOINT_PATH" and
 * exits 0 (the caller's end of stdin closing cancels it).
 */
public final class FlinkPeer {
    public static void main(String[] argv) throws Exception {
        Map<String, String> a = parse(argv);
        String mode = need(a, "mode");
        boolean full = mode.equals("full");
        boolean job = mode.equals("job");
        if (!full && !job && !mode.equals("incremental")) {
            throw new IllegalArgumentException("--mode must be full, incremental or job, not " + mode);
        }

        Configuration conf = new Configuration();
        conf.set(ExecutionOptions.RUNTIME_MODE,
                full ? RuntimeExecutionMode.BATCH : RuntimeExecutionMode.STREAMING);
        conf.set(CoreOptions.DEFAULT_PARALLELISM, 1);
        // One slot is all a parallelism-1 job needs; no web UI (a port and threads we don't use).
        conf.set(TaskManagerOptions.NUM_TASK_SLOTS, 1);
        conf.set(RestOptions.BIND_PORT, "0");
        if (job) {
            conf.setString("execution.checkpointing.interval", a.getOrDefault("checkpoint-interval", "1s"));
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(1);
        StreamTableEnvironment t = StreamTableEnvironment.create(env,
                full ? EnvironmentSettings.inBatchMode() : EnvironmentSettings.inStreamingMode());

        t.executeSql("CREATE CATALOG paimon WITH ('type' = 'paimon', 'warehouse' = '"
                + sqlString(need(a, "warehouse")) + "')");
        String source = "paimon.`" + need(a, "database") + "`.`" + need(a, "table") + "`";

        // The sink's columns are the Paimon table's (names, types, primary key), so the same
        // program fits any table; the key makes the MySQL dialect upsert (ON DUPLICATE KEY UPDATE).
        ResolvedSchema schema = t.from(source).getResolvedSchema();
        List<String> cols = schema.getColumns().stream()
                .map(c -> "`" + c.getName() + "` " + c.getDataType().getLogicalType().asSerializableString())
                .collect(Collectors.toList());
        List<String> key = schema.getPrimaryKey()
                .orElseThrow(() -> new IllegalStateException(source + " has no primary key"))
                .getColumns();
        String url = need(a, "jdbc-url");
        // Batched statements rewritten into multi-row INSERTs: what a tuned user setup has.
        url += (url.contains("?") ? "&" : "?") + "rewriteBatchedStatements=true";
        t.executeSql("CREATE TEMPORARY TABLE sink (" + String.join(", ", cols)
                + ", PRIMARY KEY (" + key.stream().map(k -> "`" + k + "`").collect(Collectors.joining(", "))
                + ") NOT ENFORCED) WITH ("
                + "'connector' = 'jdbc', "
                + "'url' = '" + sqlString(url) + "', "
                + "'driver' = 'com.mysql.cj.jdbc.Driver', "
                + "'table-name' = '" + sqlString(need(a, "target")) + "', "
                + "'username' = '" + sqlString(need(a, "user")) + "', "
                + "'password' = '" + sqlString(need(a, "password")) + "', "
                + "'sink.buffer-flush.max-rows' = '" + Integer.parseInt(need(a, "max-rows")) + "', "
                + "'sink.buffer-flush.interval' = '1s', "
                + "'sink.parallelism' = '1')");

        // Paimon's streaming source plans its first snapshot one discovery interval after it
        // starts (default 10 s): --discovery-interval (e.g. 1s) shortens that, when asked.
        String discovery = a.containsKey("discovery-interval")
                ? ", 'continuous.discovery-interval' = '" + sqlString(a.get("discovery-interval")) + "'"
                : "";
        String hints;
        if (full) {
            hints = "";
        } else if (job) {
            hints = " /*+ OPTIONS('scan.mode' = 'latest-full', 'consumer-id' = '"
                    + sqlString(need(a, "consumer-id")) + "'" + discovery + ") */";
        } else {
            hints = " /*+ OPTIONS('scan.mode' = 'from-snapshot', 'scan.snapshot-id' = '"
                    + Long.parseLong(need(a, "from-snapshot")) + "'" + discovery + ") */";
        }
        TableResult result = t.executeSql("INSERT INTO sink SELECT * FROM " + source + hints);
        if (job) {
            control(result.getJobClient().orElseThrow());
            return;
        }
        // Batch: returns when the job finished (its sink flushed on close). Streaming: blocks
        // until killed.
        result.await();
    }

    /** The job's stdin: "stop DIR" stops it with a savepoint; end of input cancels it. */
    private static void control(JobClient client) throws Exception {
        System.out.println("running " + client.getJobID());
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            if (line.startsWith("stop ")) {
                String path = client.stopWithSavepoint(false, line.substring(5).trim(),
                        SavepointFormatType.CANONICAL).get();
                System.out.println("stopped " + path);
                System.out.flush();
                System.exit(0);
            }
        }
        client.cancel().get();
        System.exit(0);
    }

    /** {@code --name value} pairs. */
    private static Map<String, String> parse(String[] argv) {
        Map<String, String> m = new HashMap<>();
        for (int i = 0; i < argv.length; i += 2) {
            if (!argv[i].startsWith("--") || i + 1 >= argv.length) {
                throw new IllegalArgumentException("expected --name value pairs, got " + argv[i]);
            }
            m.put(argv[i].substring(2), argv[i + 1]);
        }
        return m;
    }

    private static String need(Map<String, String> a, String name) {
        String v = a.get(name);
        if (v == null) {
            throw new IllegalArgumentException("--" + name + " is required");
        }
        return v;
    }

    /** A value inside a single-quoted SQL string literal. */
    private static String sqlString(String s) {
        return s.replace("'", "''");
    }

    private FlinkPeer() {}
}

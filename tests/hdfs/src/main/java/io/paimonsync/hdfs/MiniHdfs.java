package io.paimonsync.hdfs;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.MiniDFSNNTopology;

/**
 * A throw-away HDFS for tests: Hadoop's MiniDFSCluster with one namenode and two datanodes, and
 * beside it an HA pair (nameservice {@value #HA_NAMESERVICE}: namenodes nn1 and nn2 sharing their
 * edits, two datanodes of their own), all on 127.0.0.1.
 *
 * <pre>
 *   java -jar pms-mini-hdfs.jar BASE_DIR [PORT] [--ignore-stdin]
 *   java -jar pms-mini-hdfs.jar --kerberos BASE_DIR      (see {@link KerberizedHdfs})
 * </pre>
 *
 * BASE_DIR holds the namenode's and datanodes' storage (formatted anew); PORT is the namenode's
 * RPC port (0 or absent: a free one). When the clusters are up, two lines go to stdout: {@code
 * hdfs://127.0.0.1:PORT}, then {@code ha pms-ha nn1=127.0.0.1:PORT1 nn2=127.0.0.1:PORT2} (nn1
 * active); logs go to stderr (WARN). It then runs until its stdin closes (so it dies with a parent
 * that holds a pipe to it) or it gets SIGTERM; with {@code --ignore-stdin} only a signal stops it.
 * A line {@code failover} on stdin makes the HA pair's standby active (the active one standby
 * first, as an administrator's {@code hdfs haadmin -failover} does), then prints {@code failover N
 * active=nnX}. Permission checks are off; replication is 2 (see below).
 */
public final class MiniHdfs {
    static final int DATANODES = 2;
    static final String HA_NAMESERVICE = "pms-ha";

    private MiniHdfs() {}

    public static void main(String[] args) throws Exception {
        if (args.length == 2 && args[0].equals("--kerberos")) {
            KerberizedHdfs.run(new File(args[1]).getAbsoluteFile());
            return;
        }
        if (args.length < 1 || args.length > 3) {
            System.err.println("usage: MiniHdfs BASE_DIR [PORT] [--ignore-stdin]");
            System.exit(2);
        }
        File base = new File(args[0]).getAbsoluteFile();
        int port = args.length > 1 ? Integer.parseInt(args[1]) : 0;
        boolean watchStdin = !(args.length > 2 && args[2].equals("--ignore-stdin"));

        MiniDFSCluster cluster = new MiniDFSCluster.Builder(conf(new File(base, "single")))
                .nameNodePort(port)
                .numDataNodes(DATANODES)
                .format(true)
                .checkExitOnShutdown(false)
                .build();
        cluster.waitActive();
        MiniDFSCluster ha = new MiniDFSCluster.Builder(conf(new File(base, "ha")))
                .nnTopology(new MiniDFSNNTopology().addNameservice(
                        new MiniDFSNNTopology.NSConf(HA_NAMESERVICE)
                                .addNN(new MiniDFSNNTopology.NNConf("nn1"))
                                .addNN(new MiniDFSNNTopology.NNConf("nn2"))))
                .numDataNodes(DATANODES)
                .format(true)
                .checkExitOnShutdown(false)
                .build();
        ha.waitActive();
        ha.transitionToActive(0);

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                cluster.shutdown();
                ha.shutdown();
            } catch (Throwable t) {
                System.err.println("MiniHdfs: shutdown: " + t);
            }
            stopped.countDown();
        }, "mini-hdfs-shutdown"));

        System.out.println("hdfs://127.0.0.1:" + cluster.getNameNodePort());
        System.out.println("ha " + HA_NAMESERVICE
                + " nn1=127.0.0.1:" + ha.getNameNode(0).getNameNodeAddress().getPort()
                + " nn2=127.0.0.1:" + ha.getNameNode(1).getNameNodeAddress().getPort());
        System.out.flush();

        if (watchStdin) {
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            int active = 0;
            int failovers = 0;
            for (String line; (line = in.readLine()) != null; ) {
                if (!line.trim().equals("failover")) {
                    continue;
                }
                ha.transitionToStandby(active);
                active = 1 - active;
                ha.transitionToActive(active);
                failovers++;
                System.out.println("failover " + failovers + " active=nn" + (active + 1));
                System.out.flush();
            }
            System.exit(0);
        } else {
            stopped.await();
        }
    }

    /** One cluster's configuration, its storage under {@code base}. */
    private static Configuration conf(File base) {
        Configuration conf = new HdfsConfiguration();
        conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, base.getPath());
        common(conf);
        // The HA pair's standby reads the active one's edits every second (default a minute), so a
        // failover finds it current.
        conf.setInt("dfs.ha.tail-edits.period", 1);
        conf.setBoolean("dfs.ha.standby.checkpoints", false);
        return conf;
    }

    /** The settings every test cluster shares (see each). */
    static void common(Configuration conf) {
        conf.setBoolean("dfs.permissions.enabled", false);
        conf.setInt("dfs.replication", DATANODES);
        // A client may ask for blocks of any size (a test can make multi-block files cheaply);
        // the default block size stays Hadoop's.
        conf.setLong("dfs.namenode.fs-limits.min-block-size", 0);
        // No web UIs needed beyond what MiniDFSCluster insists on: keep them on loopback, free ports.
        conf.set("dfs.namenode.http-address", "127.0.0.1:0");
        conf.set("dfs.datanode.http.address", "127.0.0.1:0");
        // Closing a file completes at once when its last block is written but the datanodes have
        // not reported it to the namenode yet (else the client's complete() comes too early and
        // retries after 400-500 ms: every small file a test writes would take half a second). The
        // namenode allows that only for a block expected on more than dfs.namenode.replication.min
        // (1) datanodes: hence two datanodes and replication 2, which the Rust client
        // (hdfs-native) takes from the namenode. Paimon Java's Hadoop client writes replication 1
        // whatever this says; scripts/with-hdfs.sh shortens its retry instead.
        conf.setInt("dfs.namenode.file.close.num-committed-allowed", 1);
        // Datanodes report 127.0.0.1; clients connect there (no reverse DNS of the host name).
        conf.setBoolean("dfs.client.use.datanode.hostname", false);
    }
}

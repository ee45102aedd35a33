package io.paimonsync.hdfs;

import java.io.File;
import java.io.InputStream;
import java.util.concurrent.CountDownLatch;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.MiniDFSCluster;

/**
 * A throw-away HDFS for tests: Hadoop's MiniDFSCluster with one namenode and two datanodes, all
 * on 127.0.0.1.
 *
 * <pre>
 *   java -jar pms-mini-hdfs.jar BASE_DIR [PORT] [--ignore-stdin]
 * </pre>
 *
 * BASE_DIR holds the namenode's and datanodes' storage (formatted anew); PORT is the namenode's
 * RPC port (0 or absent: a free one). When the cluster is up, one line {@code
 * hdfs://127.0.0.1:PORT} goes to stdout; logs go to stderr (WARN). It then runs until its stdin
 * closes (so it dies with a parent that holds a pipe to it) or it gets SIGTERM; with {@code
 * --ignore-stdin} only a signal stops it. Permission checks are off; replication is 2 (see below).
 */
public final class MiniHdfs {
    private static final int DATANODES = 2;

    private MiniHdfs() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 1 || args.length > 3) {
            System.err.println("usage: MiniHdfs BASE_DIR [PORT] [--ignore-stdin]");
            System.exit(2);
        }
        File base = new File(args[0]).getAbsoluteFile();
        int port = args.length > 1 ? Integer.parseInt(args[1]) : 0;
        boolean watchStdin = !(args.length > 2 && args[2].equals("--ignore-stdin"));

        Configuration conf = new HdfsConfiguration();
        conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, base.getPath());
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

        MiniDFSCluster cluster = new MiniDFSCluster.Builder(conf)
                .nameNodePort(port)
                .numDataNodes(DATANODES)
                .format(true)
                .checkExitOnShutdown(false)
                .build();
        cluster.waitActive();

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                cluster.shutdown();
            } catch (Throwable t) {
                System.err.println("MiniHdfs: shutdown: " + t);
            }
            stopped.countDown();
        }, "mini-hdfs-shutdown"));

        System.out.println("hdfs://127.0.0.1:" + cluster.getNameNodePort());
        System.out.flush();

        if (watchStdin) {
            InputStream in = System.in;
            byte[] buf = new byte[256];
            while (in.read(buf) >= 0) {
                // Anything written is ignored; only the end of the stream counts.
            }
            System.exit(0);
        } else {
            stopped.await();
        }
    }
}

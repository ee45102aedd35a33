package io.paimonsync.hdfs;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.security.PrivilegedExceptionAction;
import java.util.Properties;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.minikdc.MiniKdc;
import org.apache.hadoop.security.UserGroupInformation;

/**
 * A Kerberized throw-away HDFS for tests, in a JVM of its own (Hadoop's login state is per JVM):
 * a KDC (Hadoop's MiniKdc, Apache Kerby) and a MiniDFSCluster with one namenode and two datanodes
 * that accept only Kerberos logins, block access tokens on, and SASL on data transfer ({@code
 * dfs.data.transfer.protection = authentication}, as a secure cluster without privileged ports
 * runs).
 *
 * <pre>
 *   java -jar pms-mini-hdfs.jar --kerberos BASE_DIR
 * </pre>
 *
 * When it is up it writes, under BASE_DIR, {@code krb5.conf} (the realm and its KDC, for the MIT
 * library the Rust client loads), {@code client.keytab} (principal {@code pms@REALM}) and {@code
 * conf/core-site.xml} + {@code conf/hdfs-site.xml} (what a client needs), then prints one line
 * {@code hdfs://127.0.0.1:PORT pms@REALM}. A line {@code put LOCAL_DIR HDFS_PATH} on stdin copies a
 * local directory there (as the HDFS superuser) and prints {@code put N done}. It runs until its
 * stdin closes.
 */
final class KerberizedHdfs {
    private static final String CLIENT = "pms";

    private KerberizedHdfs() {}

    static void run(File base) throws Exception {
        Properties kdcConf = MiniKdc.createConf();
        kdcConf.setProperty(MiniKdc.KDC_BIND_ADDRESS, "127.0.0.1");
        MiniKdc kdc = new MiniKdc(kdcConf, new File(base, "kdc"));
        kdc.start();
        String realm = kdc.getRealm();
        File serviceKeytab = new File(base, "service.keytab");
        kdc.createPrincipal(serviceKeytab, "hdfs/localhost", "HTTP/localhost");
        File clientKeytab = new File(base, "client.keytab");
        kdc.createPrincipal(clientKeytab, CLIENT);
        String hdfs = "hdfs/localhost@" + realm;

        Configuration conf = new HdfsConfiguration();
        conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, new File(base, "dfs").getPath());
        MiniHdfs.common(conf);
        conf.set("hadoop.security.authentication", "kerberos");
        conf.set("dfs.namenode.kerberos.principal", hdfs);
        conf.set("dfs.namenode.keytab.file", serviceKeytab.getPath());
        conf.set("dfs.datanode.kerberos.principal", hdfs);
        conf.set("dfs.datanode.keytab.file", serviceKeytab.getPath());
        conf.set("dfs.web.authentication.kerberos.principal", "HTTP/localhost@" + realm);
        conf.set("dfs.web.authentication.kerberos.keytab", serviceKeytab.getPath());
        conf.setBoolean("dfs.block.access.token.enable", true);
        conf.set("dfs.data.transfer.protection", "authentication");
        // Datanodes on unprivileged ports with SASL, no HTTPS web UIs: a test cluster's shortcut
        // (production uses HTTPS_ONLY); the data path is the same.
        conf.setBoolean("ignore.secure.ports.for.testing", true);
        UserGroupInformation.setConfiguration(conf);
        UserGroupInformation.loginUserFromKeytab(hdfs, serviceKeytab.getPath());

        MiniDFSCluster cluster = new MiniDFSCluster.Builder(conf)
                .numDataNodes(MiniHdfs.DATANODES)
                .format(true)
                .checkExitOnShutdown(false)
                .build();
        cluster.waitActive();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                cluster.shutdown();
                kdc.stop();
            } catch (Throwable t) {
                System.err.println("KerberizedHdfs: shutdown: " + t);
            }
        }, "kerberized-hdfs-shutdown"));

        // What a client needs: MIT's krb5.conf (TCP: the KDC serves no UDP), and the Hadoop side.
        Files.writeString(new File(base, "krb5.conf").toPath(), String.join("\n",
                "[libdefaults]",
                "  default_realm = " + realm,
                "  udp_preference_limit = 1",
                "  dns_lookup_kdc = false",
                "  dns_lookup_realm = false",
                "  rdns = false",
                "  dns_canonicalize_hostname = false",
                "[realms]",
                "  " + realm + " = {",
                "    kdc = 127.0.0.1:" + kdc.getPort(),
                "  }",
                ""));
        File clientConf = new File(base, "conf");
        clientConf.mkdirs();
        Files.writeString(new File(clientConf, "core-site.xml").toPath(), site(
                "hadoop.security.authentication", "kerberos"));
        Files.writeString(new File(clientConf, "hdfs-site.xml").toPath(), site(
                "dfs.namenode.kerberos.principal", hdfs,
                "dfs.data.transfer.protection", "authentication"));

        String uri = "hdfs://127.0.0.1:" + cluster.getNameNodePort();
        System.out.println(uri + " " + CLIENT + "@" + realm);
        System.out.flush();

        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        int puts = 0;
        for (String line; (line = in.readLine()) != null; ) {
            String[] words = line.trim().split(" ");
            if (words.length != 3 || !words[0].equals("put")) {
                continue;
            }
            java.nio.file.Path from = new File(words[1]).getAbsoluteFile().toPath();
            Path to = new Path(uri + words[2]);
            // File by file, replacing what is there: a second put of a growing Paimon table adds
            // its new files and keeps what clients wrote beside them (a consumer file).
            UserGroupInformation.getLoginUser().doAs((PrivilegedExceptionAction<Void>) () -> {
                FileSystem fs = cluster.getFileSystem();
                try (var files = Files.walk(from)) {
                    for (java.nio.file.Path f : (Iterable<java.nio.file.Path>) files.filter(Files::isRegularFile)::iterator) {
                        Path target = new Path(to, from.relativize(f).toString());
                        fs.copyFromLocalFile(false, true, new Path(f.toUri()), target);
                    }
                }
                return null;
            });
            puts++;
            System.out.println("put " + puts + " done");
            System.out.flush();
        }
        System.exit(0);
    }

    /** A Hadoop configuration file with the given name/value pairs. */
    private static String site(String... pairs) {
        StringBuilder xml = new StringBuilder("<?xml version=\"1.0\"?>\n<configuration>\n");
        for (int i = 0; i < pairs.length; i += 2) {
            xml.append("  <property><name>").append(pairs[i]).append("</name><value>")
                    .append(pairs[i + 1]).append("</value></property>\n");
        }
        return xml.append("</configuration>\n").toString();
    }
}

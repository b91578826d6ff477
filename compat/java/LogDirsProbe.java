// Prints what the Java Admin's describeLogDirs, describeReplicaLogDirs and alterReplicaLogDirs
// answer for one topic's partitions, so that a test can ask pykafkad and Apache Kafka the same
// questions and compare (the dir's path and the sizes differ by machine: they are printed as
// they are, and the test checks them against each broker's files).
//
//   java -cp <kafka-clients jars> LogDirsProbe.java BOOTSTRAP TOPIC PARTITIONS
//
// Output lines, each starting "##":
//   ##DIR <path> error=<exception class or none> total=<bytes> usable=<bytes>
//   ##SIZE <path> <topic>-<partition> size=<bytes> lag=<offset lag> future=<bool>
//   ##REPLICA <topic>-<partition> current=<path or null> future=<path or null> lag=<lag>
//   ##ALTER <label> <topic>-<partition> OK | ERROR <exception class>
import java.util.*;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionReplica;

public class LogDirsProbe {
    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
        String topic = args[1];
        int partitions = Integer.parseInt(args[2]);
        try (Admin admin = Admin.create(props)) {
            int broker = admin.describeCluster().nodes().get(60, TimeUnit.SECONDS)
                .iterator().next().id();
            Map<String, LogDirDescription> dirs = admin.describeLogDirs(List.of(broker))
                .allDescriptions().get(60, TimeUnit.SECONDS).get(broker);
            String ownDir = null;
            for (Map.Entry<String, LogDirDescription> e : new TreeMap<>(dirs).entrySet()) {
                LogDirDescription d = e.getValue();
                ownDir = e.getKey();
                String error = d.error() == null ? "none" : d.error().getClass().getSimpleName();
                System.out.println("##DIR " + e.getKey() + " error=" + error
                    + " total=" + d.totalBytes().orElse(-1) + " usable=" + d.usableBytes().orElse(-1));
                for (Map.Entry<TopicPartition, ReplicaInfo> r : d.replicaInfos().entrySet()) {
                    if (!r.getKey().topic().equals(topic)) continue;
                    ReplicaInfo info = r.getValue();
                    System.out.println("##SIZE " + e.getKey() + " " + r.getKey() + " size=" + info.size()
                        + " lag=" + info.offsetLag() + " future=" + info.isFuture());
                }
            }
            List<TopicPartitionReplica> replicas = new ArrayList<>();
            for (int p = 0; p < partitions + 1; p++) replicas.add(new TopicPartitionReplica(topic, p, broker));
            Map<TopicPartitionReplica, DescribeReplicaLogDirsResult.ReplicaLogDirInfo> infos =
                admin.describeReplicaLogDirs(replicas).all().get(60, TimeUnit.SECONDS);
            for (TopicPartitionReplica r : replicas) {
                DescribeReplicaLogDirsResult.ReplicaLogDirInfo info = infos.get(r);
                System.out.println("##REPLICA " + r.topic() + "-" + r.partition()
                    + " current=" + info.getCurrentReplicaLogDir()
                    + " future=" + info.getFutureReplicaLogDir()
                    + " lag=" + info.getCurrentReplicaOffsetLag());
            }
            alter(admin, "own-dir", ownDir, new TopicPartitionReplica(topic, 0, broker));
            alter(admin, "unknown-dir", "/nonexistent/log/dir", new TopicPartitionReplica(topic, 0, broker));
            alter(admin, "unknown-partition", ownDir, new TopicPartitionReplica(topic, partitions, broker));
        }
    }

    static void alter(Admin admin, String label, String dir, TopicPartitionReplica replica) throws Exception {
        KafkaFuture<Void> f = admin.alterReplicaLogDirs(Map.of(replica, dir)).values().get(replica);
        String answer;
        try {
            f.get(60, TimeUnit.SECONDS);
            answer = "OK";
        } catch (ExecutionException e) {
            answer = "ERROR " + e.getCause().getClass().getSimpleName();
        }
        System.out.println("##ALTER " + label + " " + replica.topic() + "-" + replica.partition() + " " + answer);
    }
}

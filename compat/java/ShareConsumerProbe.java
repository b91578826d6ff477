// KIP-932 share consumers (kafka-clients 4.4) against a broker: prints "##" lines the Python
// test compares.  Args: bootstrap topic-prefix.
import java.time.Duration;
import java.util.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.*;

public class ShareConsumerProbe {
    static String bootstrap;

    static KafkaShareConsumer<String, String> consumer(String group) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", group);
        p.put("share.acknowledgement.mode", "explicit");
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        return new KafkaShareConsumer<>(p);
    }

    static void earliest(Admin admin, String group) throws Exception {
        ConfigResource res = new ConfigResource(ConfigResource.Type.GROUP, group);
        admin.incrementalAlterConfigs(Map.of(res, List.of(new AlterConfigOp(
            new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET))))
            .all().get();
    }

    static void produce(String topic, int n) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        try (KafkaProducer<String, String> prod = new KafkaProducer<>(p)) {
            for (int i = 0; i < n; i++) prod.send(new ProducerRecord<>(topic, 0, null, "v" + i));
            prod.flush();
        }
    }

    public static void main(String[] args) throws Exception {
        bootstrap = args[0];
        String prefix = args[1];
        String topic = prefix + "-t";
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            for (String g : List.of(prefix + "-two", prefix + "-ack")) earliest(admin, g);
        }
        produce(topic, 20);
        twoConsumers(topic, prefix + "-two");
        acknowledgeTypes(topic, prefix + "-ack");
        System.out.println("##DONE");
    }

    /** Two members on one partition: every record once while the locks hold. */
    static void twoConsumers(String topic, String group) {
        Map<Long, Integer> seen = new TreeMap<>();
        Set<Integer> byConsumer = new TreeSet<>();
        try (KafkaShareConsumer<String, String> a = consumer(group);
             KafkaShareConsumer<String, String> b = consumer(group)) {
            a.subscribe(List.of(topic));
            b.subscribe(List.of(topic));
            long deadline = System.currentTimeMillis() + 60_000;
            List<KafkaShareConsumer<String, String>> both = List.of(a, b);
            while (seen.size() < 20 && System.currentTimeMillis() < deadline) {
                for (int i = 0; i < 2; i++) {
                    KafkaShareConsumer<String, String> c = both.get(i);
                    // the first records a member gets it keeps (no ack) until the other member
                    // has been served too, so the two share the partition
                    for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                        seen.merge(r.offset(), 1, Integer::sum);
                        byConsumer.add(i);
                        c.acknowledge(r, AcknowledgeType.ACCEPT);
                    }
                    c.commitSync();
                }
            }
        }
        int twice = 0;
        for (int n : seen.values()) if (n > 1) twice++;
        System.out.println("##TWO records=" + seen.size() + " twice=" + twice);
    }

    /** RELEASE gives a record back with a bumped delivery count; REJECT archives it. */
    static void acknowledgeTypes(String topic, String group) {
        try (KafkaShareConsumer<String, String> c = consumer(group)) {
            c.subscribe(List.of(topic));
            long deadline = System.currentTimeMillis() + 60_000;
            Map<Long, List<Short>> deliveries = new TreeMap<>();
            Set<Long> done = new TreeSet<>();
            while (done.size() < 19 && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    deliveries.computeIfAbsent(r.offset(), k -> new ArrayList<>())
                        .add(r.deliveryCount().orElse((short) -1));
                    if (r.offset() == 0 && deliveries.get(0L).size() < 3) {
                        c.acknowledge(r, AcknowledgeType.RELEASE);
                    } else if (r.offset() == 1) {
                        c.acknowledge(r, AcknowledgeType.REJECT);
                    } else {
                        c.acknowledge(r, AcknowledgeType.ACCEPT);
                        done.add(r.offset());
                    }
                }
                c.commitSync();
            }
            System.out.println("##RELEASED offset0=" + deliveries.get(0L));
            System.out.println("##REJECTED offset1=" + deliveries.get(1L));
            System.out.println("##ACCEPTED " + done.size());
        }
    }
}

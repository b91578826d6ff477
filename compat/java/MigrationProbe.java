// KIP-848 online migration with the Java client (kafka-clients 4.4) against a broker: two
// consumers of one group consume a 4-partition topic, then each is replaced by a consumer of the
// other group protocol; prints "##" lines (the group's type at each step, records read again
// after their commit, records lost) the Python test compares.  Args: bootstrap prefix.
import java.time.Duration;
import java.util.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.*;

public class MigrationProbe {
    static String bootstrap;
    static final int PARTITIONS = 4, PER_PHASE = 40;

    final String group, topic;
    final Map<String, KafkaConsumer<String, String>> consumers = new LinkedHashMap<>();
    final Set<String> committed = new HashSet<>();
    final Set<String> received = new HashSet<>();
    int readAfterCommit = 0;
    final Admin admin;

    MigrationProbe(String group, String topic, Admin admin) {
        this.group = group;
        this.topic = topic;
        this.admin = admin;
    }

    void start(String name, String protocol) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", group);
        p.put("group.protocol", protocol);
        p.put("auto.offset.reset", "earliest");
        p.put("enable.auto.commit", "false");
        if (protocol.equals("classic")) {
            p.put("heartbeat.interval.ms", "500");
            p.put("session.timeout.ms", "10000");
        }
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        KafkaConsumer<String, String> c = new KafkaConsumer<>(p);
        c.subscribe(List.of(topic));
        consumers.put(name, c);
    }

    void stop(String name) {
        consumers.remove(name).close();
    }

    void pollAll() {
        for (KafkaConsumer<String, String> c : consumers.values()) {
            for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(50))) {
                String key = r.partition() + "@" + r.offset();
                if (committed.contains(key)) readAfterCommit++;
                received.add(key);
                try {
                    c.commitSync(Map.of(new TopicPartition(topic, r.partition()),
                                        new OffsetAndMetadata(r.offset() + 1)));
                    committed.add(key);
                } catch (RuntimeException e) {
                    // a rebalance under way: the record may be read again (at least once)
                }
            }
        }
    }

    void consumeUntil(Set<String> expected) {
        long deadline = System.currentTimeMillis() + 90_000;
        while (!committed.containsAll(expected)) {
            if (System.currentTimeMillis() > deadline) throw new IllegalStateException("timeout");
            pollAll();
        }
    }

    String type() throws Exception {
        return admin.describeConsumerGroups(List.of(group)).all().get().get(group).type().name();
    }

    void waitType(String want) throws Exception {
        long deadline = System.currentTimeMillis() + 60_000;
        while (!type().equals(want)) {
            if (System.currentTimeMillis() > deadline) throw new IllegalStateException("type " + type() + " not " + want);
            pollAll();
        }
    }

    static Set<String> produce(String topic, int phase) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        Set<String> out = new HashSet<>();
        try (KafkaProducer<String, String> prod = new KafkaProducer<>(p)) {
            for (int i = 0; i < PER_PHASE; i++)
                prod.send(new ProducerRecord<>(topic, i % PARTITIONS, null, phase + "-" + i));
            prod.flush();
        }
        int per = PER_PHASE / PARTITIONS;
        for (int part = 0; part < PARTITIONS; part++)
            for (int o = 0; o < per; o++) out.add(part + "@" + (phase * per + o));
        return out;
    }

    static void migrate(Admin admin, String prefix, String first, String then) throws Exception {
        String topic = prefix + "-" + first + "-t";
        admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1))).all().get();
        MigrationProbe m = new MigrationProbe(prefix + "-" + first + "-g", topic, admin);
        try {
            Set<String> expected = new HashSet<>(produce(topic, 0));
            m.start("a", first);
            m.start("b", first);
            m.consumeUntil(expected);
            System.out.println("##" + first + " phase0 " + m.type());
            expected.addAll(produce(topic, 1));
            m.start("c", then);
            m.consumeUntil(expected);
            m.stop("a");
            expected.addAll(produce(topic, 2));
            m.consumeUntil(expected);
            System.out.println("##" + first + " mixed " + m.type());
            m.start("d", then);
            m.consumeUntil(expected);
            m.stop("b");
            m.waitType(then.equals("consumer") ? "CONSUMER" : "CLASSIC");
            expected.addAll(produce(topic, 3));
            m.consumeUntil(expected);
            Set<String> lost = new HashSet<>(expected);
            lost.removeAll(m.received);
            System.out.println("##" + first + " replaced " + m.type() + " readAfterCommit="
                               + m.readAfterCommit + " lost=" + lost.size());
        } finally {
            for (String name : new ArrayList<>(m.consumers.keySet())) m.stop(name);
        }
    }

    /** One member of a group a Python test drives (mixed clients): consumes and commits
     *  every record until ``stopFile`` exists, then leaves and prints what it received. */
    static void member(String group, String topic, String protocol, String stopFile)
            throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            MigrationProbe m = new MigrationProbe(group, topic, admin);
            m.start("java", protocol);
            System.out.println("##STARTED");
            System.out.flush();
            while (!new java.io.File(stopFile).exists()) m.pollAll();
            m.stop("java");
            for (String key : new TreeSet<>(m.committed)) System.out.println("##GOT " + key);
            System.out.println("##AGAIN " + m.readAfterCommit);
        }
        System.out.println("##DONE");
    }

    public static void main(String[] args) throws Exception {
        bootstrap = args[0];
        if (args.length > 2) {
            member(args[1], args[2], args[3], args[4]);
            return;
        }
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            migrate(admin, args[1], "classic", "consumer");
            migrate(admin, args[1], "consumer", "classic");
        }
        System.out.println("##DONE");
    }
}

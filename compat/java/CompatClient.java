/*
 * The compatibility scenarios with the official Java client (org.apache.kafka:kafka-clients).
 *
 * Run as a single source file, no build tool:
 *     java -cp <kafka-clients and its dependencies> CompatClient.java <bootstrap> <scenario>...
 *
 * Every scenario runs in this one JVM (a JVM start costs seconds), each bounded by a timeout,
 * and prints one line "##RESULT {json}" with its status (pass, fail, n/a), duration and reason.
 * The checks mirror compat/clients/*.py: see compat/scenarios.py for what each one means.
 */

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.*;
import java.util.concurrent.*;
import java.util.function.BooleanSupplier;

import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.*;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.errors.*;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class CompatClient {
    static final long BASE_TS = 1_700_000_000_000L;
    static final int WAIT_S = 30;
    static final int SCENARIO_TIMEOUT_S = 120;
    static final int LARGE_OK = 2_500_000, LARGE_TOO_BIG = 3_500_000, CLIENT_MAX_REQUEST = 4_000_000;

    static String bootstrap;
    /** The connection's security settings (-Dcompat.client.config, a properties file): empty on a PLAINTEXT target. */
    static Properties security = new Properties();
    /** The authorization scenario's user (-Dcompat.user.config; its name under compat.username): no rights but its ACLs. */
    static Map<String, Object> user = new HashMap<>();
    static String userName;
    /** Where the harness's own probes connect (-Dcompat.harness, PLAINTEXT) on a secured target; else the bootstrap. */
    static String harness = System.getProperty("compat.harness");
    static String runId = UUID.randomUUID().toString().substring(0, 8);

    static class NotApplicable extends RuntimeException {
        NotApplicable(String m) { super(m); }
    }

    interface Scenario { void run(String prefix) throws Exception; }

    // ------------------------------------------------------------------ helpers
    static byte[] b(String s) { return s.getBytes(StandardCharsets.UTF_8); }
    static String s(byte[] b) { return b == null ? null : new String(b, StandardCharsets.UTF_8); }

    static List<String> values(int n, String prefix) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) out.add(prefix + i);
        return out;
    }

    static void expect(Object actual, Object expected, String what) {
        if (!Objects.equals(actual, expected)) {
            String a = String.valueOf(actual), e = String.valueOf(expected);
            throw new AssertionError(what + ": got " + a.substring(0, Math.min(200, a.length()))
                + ", expected " + e.substring(0, Math.min(200, e.length())));
        }
    }

    static void waitFor(BooleanSupplier cond, String what) throws InterruptedException {
        waitFor(cond, what, WAIT_S);
    }

    static void waitFor(BooleanSupplier cond, String what, int seconds) throws InterruptedException {
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > deadline) throw new AssertionError("timed out waiting for " + what);
            Thread.sleep(100); // admin state has no change notification to wait on
        }
    }

    static Throwable cause(ExecutionException e) { return e.getCause() == null ? e : e.getCause(); }

    static <T extends Throwable> void expectFailure(Class<T> type, Callable<?> action, String what) throws Exception {
        try {
            action.call();
        } catch (ExecutionException e) {
            Throwable c = cause(e);
            if (type.isInstance(c)) return;
            throw new AssertionError(what + ": got " + c, c);
        } catch (Exception e) {
            if (type.isInstance(e)) return;
            throw new AssertionError(what + ": got " + e, e);
        }
        throw new AssertionError(what + ": no error, expected " + type.getSimpleName());
    }

    static Admin admin() { return admin(bootstrap); }

    static Admin admin(String servers) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, servers);
        p.putAll(security);
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, WAIT_S * 1000);
        return Admin.create(p);
    }

    static void createTopic(String name, int partitions, Map<String, String> configs) throws Exception {
        createTopic(name, partitions, (short) 1, configs);
    }

    /** Creates a topic and waits until every partition has a leader and (replicated) a full ISR. */
    static void createTopic(String name, int partitions, short rf, Map<String, String> configs) throws Exception {
        try (Admin a = admin()) {
            a.createTopics(List.of(new NewTopic(name, partitions, rf).configs(configs))).all()
                .get(WAIT_S, TimeUnit.SECONDS);
            List<Node> brokers = brokersToProbe(a);
            waitFor(() -> {
                for (Node broker : brokers) if (!ledEverywhere(broker, name, partitions, rf)) return false;
                return true;
            }, "topic " + name + " in every broker's metadata");
        }
    }

    /**
     * Whether {@code broker}'s own Metadata answer lists every partition of {@code topic} with a
     * leader (and, replicated, a full ISR). A creation is acknowledged once the controller has
     * it; each broker learns it from the metadata log a moment later, so a client that asks
     * another broker too early gets UNKNOWN_TOPIC_OR_PARTITION (Kafka's tests wait the same
     * way: TestUtils.waitForAllPartitionsMetadata). An Admin picks the broker it asks itself,
     * so this one asks {@code broker} on a socket of its own with the client's request classes.
     */
    static boolean ledEverywhere(Node broker, String topic, int partitions, short rf) {
        short version = 12;
        var header = new org.apache.kafka.common.requests.RequestHeader(
            org.apache.kafka.common.protocol.ApiKeys.METADATA, version, "compat-wait", 1);
        var request = new org.apache.kafka.common.requests.MetadataRequest.Builder(List.of(topic), false)
            .build(version);
        try (var socket = new java.net.Socket(broker.host(), broker.port())) {
            socket.setSoTimeout(WAIT_S * 1000);
            ByteBuffer frame = request.serializeWithHeader(header);
            var out = new java.io.DataOutputStream(socket.getOutputStream());
            out.writeInt(frame.remaining());
            out.write(frame.array(), frame.arrayOffset() + frame.position(), frame.remaining());
            out.flush();
            var in = new java.io.DataInputStream(socket.getInputStream());
            byte[] body = new byte[in.readInt()];
            in.readFully(body);
            var response = (org.apache.kafka.common.requests.MetadataResponse)
                org.apache.kafka.common.requests.AbstractResponse.parseResponse(ByteBuffer.wrap(body), header);
            var t = response.data().topics().find(topic);
            if (t == null || t.errorCode() != 0 || t.partitions().size() != partitions) return false;
            for (var p : t.partitions())
                if (p.errorCode() != 0 || p.leaderId() < 0 || (rf > 1 && p.isrNodes().size() != rf)) return false;
            return true;
        } catch (java.io.IOException e) {
            return false;
        }
    }

    /** The brokers as the harness reaches them: on a secured target through its PLAINTEXT listener. */
    static List<Node> brokersToProbe(Admin a) throws Exception {
        if (harness == null) return new ArrayList<>(a.describeCluster().nodes().get(WAIT_S, TimeUnit.SECONDS));
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, harness);
        try (Admin h = Admin.create(p)) {
            return new ArrayList<>(h.describeCluster().nodes().get(WAIT_S, TimeUnit.SECONDS));
        }
    }

    static String topic(String prefix, String suffix, int partitions, Map<String, String> configs) throws Exception {
        String name = prefix + (suffix.isEmpty() ? "" : "-" + suffix);
        createTopic(name, partitions, configs);
        return name;
    }

    static String topic(String prefix) throws Exception { return topic(prefix, "", 1, Map.of()); }

    static KafkaProducer<byte[], byte[]> producer(Map<String, Object> extra) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.putAll(security);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, WAIT_S * 1000);
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, WAIT_S * 1000 - 1000);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, WAIT_S * 1000);
        p.putAll(extra);
        return new KafkaProducer<>(p);
    }

    static List<RecordMetadata> sendAll(KafkaProducer<byte[], byte[]> p, List<ProducerRecord<byte[], byte[]>> records) throws Exception {
        List<Future<RecordMetadata>> futures = new ArrayList<>();
        for (var r : records) futures.add(p.send(r));
        p.flush();
        List<RecordMetadata> out = new ArrayList<>();
        for (var f : futures) out.add(f.get(WAIT_S, TimeUnit.SECONDS));
        return out;
    }

    static Properties consumerProps(Map<String, Object> extra) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.putAll(security);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.putAll(extra);
        return p;
    }

    static List<ConsumerRecord<byte[], byte[]>> consume(String topic, int count, List<Integer> partitions, Map<String, Object> extra) {
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        try (var c = new KafkaConsumer<byte[], byte[]>(consumerProps(extra))) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int p : partitions) tps.add(new TopicPartition(topic, p));
            c.assign(tps);
            c.seekToBeginning(tps);
            long deadline = System.nanoTime() + WAIT_S * 1_000_000_000L;
            while (out.size() < count && System.nanoTime() < deadline) {
                for (var r : c.poll(Duration.ofMillis(500))) out.add(r);
            }
        }
        out.sort(Comparator.comparingInt((ConsumerRecord<byte[], byte[]> r) -> r.partition()).thenComparingLong(ConsumerRecord::offset));
        if (out.size() < count) throw new AssertionError("consumed " + out.size() + " of " + count + " records in " + WAIT_S + "s");
        return out;
    }

    static List<ConsumerRecord<byte[], byte[]>> consume(String topic, int count) {
        return consume(topic, count, List.of(0), Map.of());
    }

    static List<String> valuesOf(List<ConsumerRecord<byte[], byte[]>> records) {
        List<String> out = new ArrayList<>();
        for (var r : records) out.add(s(r.value()));
        return out;
    }

    static byte[] largeValue(int size) throws Exception {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        byte[] out = new byte[size];
        int pos = 0;
        for (long counter = 0; pos < size; counter++) {
            byte[] block = sha.digest(java.nio.ByteBuffer.allocate(8).putLong(counter).array());
            int n = Math.min(block.length, size - pos);
            System.arraycopy(block, 0, out, pos, n);
            pos += n;
        }
        return out;
    }

    // ------------------------------------------------------------------ scenarios
    static void produceConsume(String prefix) throws Exception {
        String t = topic(prefix);
        try (var p = producer(Map.of())) {
            List<ProducerRecord<byte[], byte[]>> recs = new ArrayList<>();
            for (String v : values(100, "v")) recs.add(new ProducerRecord<>(t, b(v)));
            sendAll(p, recs);
        }
        var got = consume(t, 100);
        expect(valuesOf(got), values(100, "v"), "values");
        List<Long> offsets = new ArrayList<>();
        for (var r : got) offsets.add(r.offset());
        List<Long> want = new ArrayList<>();
        for (long i = 0; i < 100; i++) want.add(i);
        expect(offsets, want, "offsets");
    }

    static Scenario codec(String name) {
        return prefix -> {
            String t = topic(prefix);
            try (var p = producer(Map.of(ProducerConfig.COMPRESSION_TYPE_CONFIG, name, ProducerConfig.LINGER_MS_CONFIG, 50))) {
                List<ProducerRecord<byte[], byte[]>> recs = new ArrayList<>();
                for (String v : values(200, "v")) recs.add(new ProducerRecord<>(t, b("k"), b(v)));
                sendAll(p, recs);
            }
            expect(valuesOf(consume(t, 200)), values(200, "v"), "values");
        };
    }

    static void keysPartitioning(String prefix) throws Exception {
        String t = topic(prefix, "", 4, Map.of());
        List<ProducerRecord<byte[], byte[]>> recs = new ArrayList<>();
        Set<String> keys = new HashSet<>();
        for (int i = 0; i < 40; i++) {
            keys.add("key" + (i % 10));
            recs.add(new ProducerRecord<>(t, b("key" + (i % 10)), b("x")));
        }
        for (int i = 0; i < 8; i++) recs.add(new ProducerRecord<>(t, i % 4, b("explicit"), b(String.valueOf(i))));
        try (var p = producer(Map.of())) { sendAll(p, recs); }
        Map<String, Set<Integer>> where = new HashMap<>();
        for (var r : consume(t, 48, List.of(0, 1, 2, 3), Map.of())) {
            if (s(r.key()).equals("explicit")) expect(r.partition(), Integer.parseInt(s(r.value())) % 4, "partition of an explicit record");
            else where.computeIfAbsent(s(r.key()), k -> new HashSet<>()).add(r.partition());
        }
        expect(where.keySet(), keys, "keys");
        for (var e : where.entrySet()) expect(e.getValue().size(), 1, "partitions of key " + e.getKey());
    }

    static final List<Header> HEADERS = List.of(
        new RecordHeader("a", b("1")), new RecordHeader("b", new byte[0]), new RecordHeader("a", b("2")),
        new RecordHeader("n", (byte[]) null), new RecordHeader("utf8-\u00e9", new byte[]{0, (byte) 0xff}));

    static void headers(String prefix) throws Exception {
        String t = topic(prefix);
        List<ProducerRecord<byte[], byte[]>> recs = new ArrayList<>();
        for (String v : values(10, "v")) recs.add(new ProducerRecord<>(t, null, null, null, b(v), HEADERS));
        try (var p = producer(Map.of())) { sendAll(p, recs); }
        for (var r : consume(t, 10)) {
            List<Header> got = new ArrayList<>();
            r.headers().forEach(got::add);
            expect(got.size(), HEADERS.size(), "header count");
            for (int i = 0; i < got.size(); i++) {
                expect(got.get(i).key(), HEADERS.get(i).key(), "header key " + i);
                expect(Arrays.toString(got.get(i).value()), Arrays.toString(HEADERS.get(i).value()), "header value " + i);
            }
        }
    }

    static void timestampsCreateTime(String prefix) throws Exception {
        String t = topic(prefix);
        List<ProducerRecord<byte[], byte[]>> recs = new ArrayList<>();
        for (int i = 0; i < 20; i++) recs.add(new ProducerRecord<>(t, null, BASE_TS + 1000L * i, null, b("v" + i)));
        try (var p = producer(Map.of())) { sendAll(p, recs); }
        var got = consume(t, 20);
        for (int i = 0; i < 20; i++) {
            expect(got.get(i).timestamp(), BASE_TS + 1000L * i, "timestamp " + i);
            expect(got.get(i).timestampType(), TimestampType.CREATE_TIME, "timestamp type");
        }
    }

    static void timestampsLogAppendTime(String prefix) throws Exception {
        String t = topic(prefix, "", 1, Map.of("message.timestamp.type", "LogAppendTime"));
        List<ProducerRecord<byte[], byte[]>> recs = new ArrayList<>();
        for (int i = 0; i < 5; i++) recs.add(new ProducerRecord<>(t, null, BASE_TS, null, b("v" + i)));
        long before = System.currentTimeMillis();
        List<RecordMetadata> meta;
        try (var p = producer(Map.of())) { meta = sendAll(p, recs); }
        long after = System.currentTimeMillis();
        var got = consume(t, 5);
        for (var r : got) {
            expect(r.timestampType(), TimestampType.LOG_APPEND_TIME, "timestamp type");
            if (r.timestamp() < before - 1000 || r.timestamp() > after + 1000)
                throw new AssertionError("LogAppendTime " + r.timestamp() + " not in [" + before + ", " + after + "]");
        }
        expect(meta.get(0).timestamp(), got.get(0).timestamp(), "the produce response's log append time");
    }

    static void largeRecords(String prefix) throws Exception {
        String t = topic(prefix, "", 1, Map.of("max.message.bytes", "3000000"));
        byte[] big = largeValue(LARGE_OK);
        try (var p = producer(Map.of(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, CLIENT_MAX_REQUEST))) {
            sendAll(p, List.of(new ProducerRecord<>(t, big)));
            byte[] tooBig = largeValue(LARGE_TOO_BIG);
            expectFailure(RecordTooLargeException.class,
                () -> sendAll(p, List.of(new ProducerRecord<>(t, tooBig))), "a record above max.message.bytes");
        }
        var got = consume(t, 1);
        expect(got.get(0).value().length, LARGE_OK, "size");
        expect(Arrays.equals(got.get(0).value(), big), true, "content intact");
    }

    static void offsetsByTime(String prefix) throws Exception {
        String t = topic(prefix);
        List<ProducerRecord<byte[], byte[]>> recs = new ArrayList<>();
        for (int i = 0; i < 20; i++) recs.add(new ProducerRecord<>(t, null, BASE_TS + 1000L * i, null, b("v" + i)));
        try (var p = producer(Map.of())) { sendAll(p, recs); }
        var tp = new TopicPartition(t, 0);
        try (var c = new KafkaConsumer<byte[], byte[]>(consumerProps(Map.of()))) {
            var between = c.offsetsForTimes(Map.of(tp, BASE_TS + 5500)).get(tp);
            expect(between.offset() + "@" + between.timestamp(), "6@" + (BASE_TS + 6000), "between records");
            expect(c.offsetsForTimes(Map.of(tp, BASE_TS + 10_000)).get(tp).offset(), 10L, "exact timestamp");
            expect(c.offsetsForTimes(Map.of(tp, BASE_TS + 10_000_000)).get(tp), null, "after the last");
            expect(c.beginningOffsets(List.of(tp)).get(tp), 0L, "beginning");
            expect(c.endOffsets(List.of(tp)).get(tp), 20L, "end");
        }
        try (Admin a = admin()) {
            var r = a.listOffsets(Map.of(tp, OffsetSpec.forTimestamp(BASE_TS + 5500))).partitionResult(tp).get();
            expect(r.offset(), 6L, "admin listOffsets by timestamp");
            expect(a.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get().offset(), 20L, "admin latest");
            expect(a.listOffsets(Map.of(tp, OffsetSpec.maxTimestamp())).partitionResult(tp).get().offset(), 19L, "admin max timestamp");
        }
    }

    static void adminTopics(String prefix) throws Exception {
        String name = prefix;
        try (Admin a = admin()) {
            a.createTopics(List.of(new NewTopic(name, 3, (short) 1).configs(Map.of("retention.ms", "12345")))).all().get();
            waitFor(() -> { try { return a.listTopics().names().get().contains(name); } catch (Exception e) { return false; } }, "topic listed");
            expectFailure(TopicExistsException.class, () -> a.createTopics(List.of(new NewTopic(name, 3, (short) 1))).all().get(), "duplicate create");
            var desc = a.describeTopics(List.of(name)).allTopicNames().get().get(name);
            List<Integer> parts = new ArrayList<>();
            for (var p : desc.partitions()) parts.add(p.partition());
            expect(parts, List.of(0, 1, 2), "partitions");
            expect(desc.partitions().get(0).leader() != null, true, "partition leader");
            a.createPartitions(Map.of(name, NewPartitions.increaseTo(5))).all().get();
            waitFor(() -> { try { return a.describeTopics(List.of(name)).allTopicNames().get().get(name).partitions().size() == 5; } catch (Exception e) { return false; } }, "5 partitions");
            a.deleteTopics(List.of(name)).all().get();
            waitFor(() -> { try { return !a.listTopics().names().get().contains(name); } catch (Exception e) { return false; } }, "topic gone");
            expectFailure(UnknownTopicOrPartitionException.class, () -> a.deleteTopics(List.of(name)).all().get(), "deleting a missing topic");
        }
    }

    static void adminConfigs(String prefix) throws Exception {
        String t = topic(prefix, "", 1, Map.of("retention.ms", "12345"));
        var res = new ConfigResource(ConfigResource.Type.TOPIC, t);
        try (Admin a = admin()) {
            var c = a.describeConfigs(List.of(res)).all().get().get(res);
            expect(c.get("retention.ms").value(), "12345", "override");
            expect(c.get("retention.ms").source(), ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG, "override source");
            expect(c.get("segment.bytes").value(), "1073741824", "default segment.bytes");
            expect(c.get("segment.bytes").source(), ConfigEntry.ConfigSource.DEFAULT_CONFIG, "default source");
            a.incrementalAlterConfigs(Map.of(res, List.of(
                new AlterConfigOp(new ConfigEntry("cleanup.policy", "compact"), AlterConfigOp.OpType.SET),
                new AlterConfigOp(new ConfigEntry("retention.ms", null), AlterConfigOp.OpType.DELETE)))).all().get();
            c = a.describeConfigs(List.of(res)).all().get().get(res);
            expect(c.get("cleanup.policy").value(), "compact", "set cleanup.policy");
            expect(c.get("retention.ms").value(), "604800000", "deleted override back to default");
            expectFailure(InvalidConfigurationException.class, () -> a.incrementalAlterConfigs(Map.of(res, List.of(
                new AlterConfigOp(new ConfigEntry("no.such.config", "1"), AlterConfigOp.OpType.SET)))).all().get(), "unknown config name");
        }
    }

    static void adminDescribePaging(String prefix) throws Exception {
        String big = topic(prefix, "big", 7, Map.of());
        String small = topic(prefix, "small", 3, Map.of());
        try (Admin a = admin()) {
            var opts = new DescribeTopicsOptions().partitionSizeLimitPerResponse(3);
            var got = a.describeTopics(List.of(big, small), opts).allTopicNames().get();
            for (var e : Map.of(big, 7, small, 3).entrySet()) {
                List<Integer> parts = new ArrayList<>();
                for (var p : got.get(e.getKey()).partitions()) parts.add(p.partition());
                List<Integer> want = new ArrayList<>();
                for (int i = 0; i < e.getValue(); i++) want.add(i);
                expect(parts, want, "partitions of " + e.getKey());
            }
            expectFailure(UnknownTopicOrPartitionException.class,
                () -> a.describeTopics(List.of(prefix + "-missing"), opts).allTopicNames().get(), "describing a missing topic");
        }
    }

    static KafkaConsumer<byte[], byte[]> groupConsumer(String group, String topic, Map<String, Object> extra) {
        Map<String, Object> conf = new HashMap<>(Map.of(ConsumerConfig.GROUP_ID_CONFIG, group, ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"));
        conf.putAll(extra);
        var c = new KafkaConsumer<byte[], byte[]>(consumerProps(conf));
        c.subscribe(List.of(topic));
        return c;
    }

    static Set<Integer> parts(KafkaConsumer<?, ?> c) {
        Set<Integer> out = new TreeSet<>();
        for (var tp : c.assignment()) out.add(tp.partition());
        return out;
    }

    static void consumerGroup(String prefix) throws Exception {
        String t = topic(prefix, "", 4, Map.of());
        String group = prefix + "-group";
        List<ProducerRecord<byte[], byte[]>> recs = new ArrayList<>();
        for (int i = 0; i < 40; i++) recs.add(new ProducerRecord<>(t, i % 4, null, b("v" + i)));
        try (var p = producer(Map.of())) { sendAll(p, recs); }
        Set<String> seen = new HashSet<>();
        try (var a = groupConsumer(group, t, Map.of())) {
            long deadline = System.nanoTime() + WAIT_S * 1_000_000_000L;
            while (a.assignment().size() < 4 && System.nanoTime() < deadline)
                for (var r : a.poll(Duration.ofMillis(200))) seen.add(r.partition() + "/" + r.offset());
            expect(a.assignment().size(), 4, "partitions of the only member");
            try (var b = groupConsumer(group, t, Map.of())) {
                deadline = System.nanoTime() + WAIT_S * 1_000_000_000L;
                while (System.nanoTime() < deadline) {
                    for (var r : a.poll(Duration.ofMillis(50))) seen.add(r.partition() + "/" + r.offset());
                    for (var r : b.poll(Duration.ofMillis(50))) seen.add(r.partition() + "/" + r.offset());
                    Set<Integer> pa = parts(a), pb = parts(b), all = new TreeSet<>(pa);
                    all.addAll(pb);
                    if (!pa.isEmpty() && !pb.isEmpty() && all.size() == 4 && pa.size() + pb.size() == 4 && seen.size() == 40) break;
                }
                Set<Integer> pa = parts(a), pb = parts(b), all = new TreeSet<>(pa);
                all.addAll(pb);
                expect(pa.size() + "+" + pb.size() + "=" + all, "2+2=[0, 1, 2, 3]", "assignments after the rebalance");
                expect(seen.size(), 40, "records consumed by the group");
                for (var member : List.of(a, b)) {
                    Map<TopicPartition, OffsetAndMetadata> offs = new HashMap<>();
                    for (var tp : member.assignment()) offs.put(tp, new OffsetAndMetadata(10));
                    member.commitSync(offs);
                }
            }
        }
        List<ProducerRecord<byte[], byte[]>> late = new ArrayList<>();
        for (int i = 0; i < 4; i++) late.add(new ProducerRecord<>(t, i, null, b("late")));
        try (var p = producer(Map.of())) { sendAll(p, late); }
        try (var c = groupConsumer(group, t, Map.of())) {
            List<String> got = new ArrayList<>();
            long deadline = System.nanoTime() + WAIT_S * 1_000_000_000L;
            while (got.size() < 4 && System.nanoTime() < deadline)
                for (var r : c.poll(Duration.ofMillis(200))) got.add(r.partition() + ":" + s(r.value()));
            Collections.sort(got);
            expect(got, List.of("0:late", "1:late", "2:late", "3:late"), "a new member resumes after the committed offsets");
        }
    }

    /** KIP-848 (group.protocol=consumer): two members share 4 partitions, one leaves and the
     *  other takes all four; offsets committed with the member epoch; a new member resumes. */
    static void consumerGroupProtocol(String prefix) throws Exception {
        String t = topic(prefix, "", 4, Map.of());
        String group = prefix + "-group";
        Map<String, Object> kip848 = Map.of("group.protocol", "consumer");
        List<ProducerRecord<byte[], byte[]>> recs = new ArrayList<>();
        for (int i = 0; i < 40; i++) recs.add(new ProducerRecord<>(t, i % 4, null, b("v" + i)));
        try (var p = producer(Map.of())) { sendAll(p, recs); }
        try (var a = groupConsumer(group, t, kip848)) {
            waitFor(() -> { a.poll(Duration.ofMillis(100)); return a.assignment().size() == 4; }, "the only member's 4 partitions");
            try (var b = groupConsumer(group, t, kip848)) {
                waitFor(() -> {
                    a.poll(Duration.ofMillis(50));
                    b.poll(Duration.ofMillis(50));
                    Set<Integer> pa = parts(a), pb = parts(b), all = new TreeSet<>(pa);
                    all.addAll(pb);
                    return pa.size() == 2 && pb.size() == 2 && all.size() == 4;
                }, "two partitions for each member");
            }
            waitFor(() -> { a.poll(Duration.ofMillis(100)); return a.assignment().size() == 4; }, "the remaining member to take all 4 partitions");
            Map<TopicPartition, OffsetAndMetadata> offs = new HashMap<>();
            for (var tp : a.assignment()) offs.put(tp, new OffsetAndMetadata(10));
            a.commitSync(offs);
        }
        List<ProducerRecord<byte[], byte[]>> late = new ArrayList<>();
        for (int i = 0; i < 4; i++) late.add(new ProducerRecord<>(t, i, null, b("late")));
        try (var p = producer(Map.of())) { sendAll(p, late); }
        try (var c = groupConsumer(group, t, kip848)) {
            List<String> got = new ArrayList<>();
            long deadline = System.nanoTime() + WAIT_S * 1_000_000_000L;
            while (got.size() < 4 && System.nanoTime() < deadline)
                for (var r : c.poll(Duration.ofMillis(200))) got.add(r.partition() + ":" + s(r.value()));
            Collections.sort(got);
            expect(got, List.of("0:late", "1:late", "2:late", "3:late"), "a new member resumes after the committed offsets");
        }
    }

    static void offsetCommit(String prefix) throws Exception {
        String t = topic(prefix);
        String group = prefix + "-group";
        List<ProducerRecord<byte[], byte[]>> recs = new ArrayList<>();
        for (String v : values(10, "v")) recs.add(new ProducerRecord<>(t, b(v)));
        try (var p = producer(Map.of())) { sendAll(p, recs); }
        var tp = new TopicPartition(t, 0);
        try (var c = new KafkaConsumer<byte[], byte[]>(consumerProps(Map.of(ConsumerConfig.GROUP_ID_CONFIG, group)))) {
            c.assign(List.of(tp));
            c.commitSync(Map.of(tp, new OffsetAndMetadata(5, "meta")));
            var got = c.committed(Set.of(tp)).get(tp);
            expect(got.offset() + "/" + got.metadata(), "5/meta", "committed offset and metadata");
        }
        try (var c = new KafkaConsumer<byte[], byte[]>(consumerProps(Map.of(ConsumerConfig.GROUP_ID_CONFIG, group, ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none")))) {
            c.assign(List.of(tp));
            Long first = null;
            long deadline = System.nanoTime() + WAIT_S * 1_000_000_000L;
            while (first == null && System.nanoTime() < deadline)
                for (var r : c.poll(Duration.ofMillis(200))) { if (first == null) first = r.offset(); }
            expect(first, 5L, "a new member starts at the committed offset");
        }
        try (Admin a = admin()) {
            var offs = a.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
            expect(offs.get(tp).offset(), 5L, "admin listConsumerGroupOffsets");
        }
    }

    static void idempotentProducer(String prefix) throws Exception {
        String t = topic(prefix, "", 2, Map.of());
        List<ProducerRecord<byte[], byte[]>> recs = new ArrayList<>();
        for (int i = 0; i < 1000; i++) recs.add(new ProducerRecord<>(t, i % 2, null, b("v" + i)));
        try (var p = producer(Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true, ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5))) {
            sendAll(p, recs);
        }
        var got = consume(t, 1000, List.of(0, 1), Map.of());
        for (int part = 0; part < 2; part++) {
            List<String> want = new ArrayList<>(), have = new ArrayList<>();
            for (int i = part; i < 1000; i += 2) want.add("v" + i);
            for (var r : got) if (r.partition() == part) have.add(s(r.value()));
            expect(have, want, "partition " + part);
        }
    }

    static KafkaProducer<byte[], byte[]> txnProducer(String prefix) {
        var p = producer(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, prefix + "-txn"));
        p.initTransactions();
        return p;
    }

    static void transactions(String prefix) throws Exception {
        String t = topic(prefix);
        try (var p = txnProducer(prefix)) {
            for (String[] step : new String[][]{{"commit", "a"}, {"abort", "b"}, {"commit", "c"}}) {
                p.beginTransaction();
                for (String v : values(5, step[1])) p.send(new ProducerRecord<>(t, b(v)));
                p.flush();
                if (step[0].equals("commit")) p.commitTransaction(); else p.abortTransaction();
            }
        }
        List<String> want = new ArrayList<>(values(5, "a"));
        want.addAll(values(5, "c"));
        expect(valuesOf(consume(t, 10, List.of(0), Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"))), want, "read_committed");
        List<String> all = valuesOf(consume(t, 15, List.of(0), Map.of()));
        Collections.sort(all);
        List<String> wantAll = new ArrayList<>(values(5, "a"));
        wantAll.addAll(values(5, "b"));
        wantAll.addAll(values(5, "c"));
        Collections.sort(wantAll);
        expect(all, wantAll, "read_uncommitted");
    }

    static void transactionsOffsets(String prefix) throws Exception {
        String source = topic(prefix, "in", 1, Map.of()), sink = topic(prefix, "out", 1, Map.of());
        String group = prefix + "-group";
        List<ProducerRecord<byte[], byte[]>> recs = new ArrayList<>();
        for (String v : values(10, "v")) recs.add(new ProducerRecord<>(source, b(v)));
        try (var p = producer(Map.of())) { sendAll(p, recs); }
        var tp = new TopicPartition(source, 0);
        try (var c = groupConsumer(group, source, Map.of()); var t = txnProducer(prefix)) {
            List<ConsumerRecord<byte[], byte[]>> got = new ArrayList<>();
            long deadline = System.nanoTime() + WAIT_S * 1_000_000_000L;
            while (got.size() < 10 && System.nanoTime() < deadline)
                for (var r : c.poll(Duration.ofMillis(200))) got.add(r);
            expect(got.size(), 10, "input records");
            t.beginTransaction();
            for (var r : got) t.send(new ProducerRecord<>(sink, b(s(r.value()).toUpperCase())));
            t.sendOffsetsToTransaction(Map.of(tp, new OffsetAndMetadata(10)), c.groupMetadata());
            t.commitTransaction();
        }
        List<String> want = new ArrayList<>();
        for (String v : values(10, "v")) want.add(v.toUpperCase());
        expect(valuesOf(consume(sink, 10, List.of(0), Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"))), want, "output");
        try (var c = new KafkaConsumer<byte[], byte[]>(consumerProps(Map.of(ConsumerConfig.GROUP_ID_CONFIG, group)))) {
            expect(c.committed(Set.of(tp)).get(tp).offset(), 10L, "input offset committed with the transaction");
        }
    }

    /** Transaction version 2 (KIP-890 part 2) when the broker finalizes it: commits and aborts
     *  across three partitions with a group's offsets in each transaction; read_committed sees
     *  exactly the committed records and the group's committed offset is the last committed one. */
    static void transactionsV2(String prefix) throws Exception {
        String source = topic(prefix, "in", 1, Map.of()), sink = topic(prefix, "out", 3, Map.of());
        String group = prefix + "-group";
        var tp = new TopicPartition(source, 0);
        try (var p = txnProducer(prefix); var c = groupConsumer(group, source, Map.of())) {
            long offset = 0;
            for (String[] step : new String[][]{{"commit", "a"}, {"abort", "b"}, {"commit", "c"}, {"abort", "d"}}) {
                p.beginTransaction();
                for (int part = 0; part < 3; part++)
                    for (String v : values(2, step[1] + part)) p.send(new ProducerRecord<>(sink, part, null, b(v)));
                offset += 5;
                p.sendOffsetsToTransaction(Map.of(tp, new OffsetAndMetadata(offset)), c.groupMetadata());
                p.flush();
                if (step[0].equals("commit")) p.commitTransaction(); else p.abortTransaction();
            }
        }
        List<String> want = new ArrayList<>();
        for (String s : new String[]{"a", "c"}) for (int part = 0; part < 3; part++) want.addAll(values(2, s + part));
        Collections.sort(want);
        List<String> got = valuesOf(consume(sink, 12, List.of(0, 1, 2), Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed")));
        Collections.sort(got);
        expect(got, want, "read_committed");
        expect(consume(sink, 24, List.of(0, 1, 2), Map.of()).size(), 24, "read_uncommitted (aborted ones too)");
        try (var c = new KafkaConsumer<byte[], byte[]>(consumerProps(Map.of(ConsumerConfig.GROUP_ID_CONFIG, group)))) {
            expect(c.committed(Set.of(tp)).get(tp).offset(), 15L, "offset of the last committed transaction");
        }
    }

    // ------------------------------------------------------------------ cluster scenarios
    /** The first bootstrap address alone: reaching the other brokers proves Metadata was followed. */
    static String firstBroker() { return bootstrap.split(",")[0].trim(); }

    static Set<Integer> brokerIds(Admin a) throws Exception {
        Set<Integer> out = new TreeSet<>();
        for (Node n : a.describeCluster().nodes().get()) out.add(n.id());
        return out;
    }

    static List<Integer> ids(List<Node> nodes) {
        List<Integer> out = new ArrayList<>();
        for (Node n : nodes) out.add(n.id());
        Collections.sort(out);
        return out;
    }

    static Map<Integer, Integer> leaders(Admin a, String topic) throws Exception {
        Map<Integer, Integer> out = new TreeMap<>();
        for (var p : a.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions())
            out.put(p.partition(), p.leader() == null ? -1 : p.leader().id());
        return out;
    }

    static void expectSpread(Map<Integer, Integer> leaderOf, Set<Integer> brokers, String what) {
        if (!new TreeSet<>(leaderOf.values()).equals(brokers))
            throw new AssertionError(what + ": leaders " + leaderOf + " do not cover brokers " + brokers);
    }

    static void replicatedAcksAll(String prefix) throws Exception {
        String t = prefix;
        createTopic(t, 3, (short) 3, Map.of("min.insync.replicas", "2"));
        List<ProducerRecord<byte[], byte[]>> recs = new ArrayList<>();
        for (int i = 0; i < 300; i++) recs.add(new ProducerRecord<>(t, i % 3, null, b("v" + i)));
        try (var p = producer(Map.of(ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true))) {
            sendAll(p, recs);
        }
        var got = consume(t, 300, List.of(0, 1, 2), Map.of());
        for (int part = 0; part < 3; part++) {
            List<String> want = new ArrayList<>(), have = new ArrayList<>();
            for (int i = part; i < 300; i += 3) want.add("v" + i);
            for (var r : got) if (r.partition() == part) have.add(s(r.value()));
            expect(have, want, "partition " + part);
        }
        try (Admin a = admin()) {
            Map<Integer, Integer> leaderOf = new TreeMap<>();
            for (var p : a.describeTopics(List.of(t)).allTopicNames().get().get(t).partitions()) {
                expect(p.replicas().size(), 3, "replicas of partition " + p.partition());
                expect(ids(p.isr()), ids(p.replicas()), "ISR = replicas of partition " + p.partition());
                leaderOf.put(p.partition(), p.leader().id());
            }
            expectSpread(leaderOf, brokerIds(a), "leaders");
        }
    }

    static void leadersOnSeveralBrokers(String prefix) throws Exception {
        for (short rf : new short[]{1, 3}) {
            String t = prefix + "-rf" + rf;
            createTopic(t, 6, rf, Map.of());
            List<ProducerRecord<byte[], byte[]>> recs = new ArrayList<>();
            for (int i = 0; i < 60; i++) recs.add(new ProducerRecord<>(t, i % 6, null, b("p" + (i % 6) + "-" + (i / 6))));
            try (var p = producer(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, firstBroker()))) { sendAll(p, recs); }
            var got = consume(t, 60, List.of(0, 1, 2, 3, 4, 5), Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, firstBroker()));
            for (int part = 0; part < 6; part++) {
                List<String> want = new ArrayList<>(), have = new ArrayList<>();
                for (int j = 0; j < 10; j++) want.add("p" + part + "-" + j);
                for (var r : got) if (r.partition() == part) have.add(s(r.value()));
                expect(have, want, "rf=" + rf + " partition " + part);
            }
            try (Admin a = admin(firstBroker())) { expectSpread(leaders(a, t), brokerIds(a), "rf=" + rf + " leaders"); }
        }
    }

    /** Kafka's partition of a group in __consumer_offsets: Utils.abs(groupId.hashCode()) % partitions. */
    static int offsetsPartition(String group, int partitions) {
        int h = group.hashCode();
        return (h == Integer.MIN_VALUE ? 0 : Math.abs(h)) % partitions;
    }

    static void groupCoordinatorElsewhere(String prefix) throws Exception {
        String home = firstBroker();
        String group = null;
        int coordinator = -1, homeId = -1;
        try (Admin a = admin(home)) {
            for (Node n : a.describeCluster().nodes().get()) if ((n.host() + ":" + n.port()).equals(home)) homeId = n.id();
            // the first FindCoordinator creates __consumer_offsets
            try { a.describeConsumerGroups(List.of(prefix + "-probe")).all().get(); } catch (ExecutionException e) { /* only its FindCoordinator matters */ }
            Map<Integer, Integer>[] offsets = new Map[1];
            waitFor(() -> {
                try {
                    offsets[0] = leaders(a, "__consumer_offsets");
                    return !offsets[0].containsValue(-1);
                } catch (Exception e) {
                    return false;
                }
            }, "__consumer_offsets with a leader for every partition", 120); // 50 x 3 replicas: slow on a loaded machine
            for (int i = 0; i < 1000 && group == null; i++) {
                String g = prefix + "-group" + i;
                int leader = offsets[0].get(offsetsPartition(g, offsets[0].size()));
                if (leader != homeId) { group = g; coordinator = leader; }
            }
        }
        expect(group != null, true, "a group led by another broker than " + homeId);
        String t = topic(prefix, "", 1, Map.of());
        List<ProducerRecord<byte[], byte[]>> recs = new ArrayList<>();
        for (String v : values(10, "v")) recs.add(new ProducerRecord<>(t, b(v)));
        try (var p = producer(Map.of())) { sendAll(p, recs); }
        var tp = new TopicPartition(t, 0);
        Map<String, Object> conf = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, home);
        try (var c = groupConsumer(group, t, conf)) {
            List<String> got = new ArrayList<>();
            long deadline = System.nanoTime() + WAIT_S * 1_000_000_000L;
            while (got.size() < 10 && System.nanoTime() < deadline)
                for (var r : c.poll(Duration.ofMillis(200))) got.add(s(r.value()));
            expect(got, values(10, "v"), "records read by the group");
            c.commitSync(Map.of(tp, new OffsetAndMetadata(6)));
        }
        try (Admin a = admin(home)) {
            var d = a.describeConsumerGroups(List.of(group)).all().get().get(group);
            expect(d.coordinator().id(), coordinator, "the group's coordinator (bootstrapped from broker " + homeId + ")");
        }
        try (var c = groupConsumer(group, t, Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, home, ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none"))) {
            Long first = null;
            long deadline = System.nanoTime() + WAIT_S * 1_000_000_000L;
            while (first == null && System.nanoTime() < deadline)
                for (var r : c.poll(Duration.ofMillis(200))) { if (first == null) first = r.offset(); }
            expect(first, 6L, "a new member resumes from the committed offset");
        }
    }

    static void transactionAcrossBrokers(String prefix) throws Exception {
        String t = prefix;
        createTopic(t, 3, (short) 3, Map.of());
        try (Admin a = admin()) { expectSpread(leaders(a, t), brokerIds(a), "leaders"); }
        try (var p = producer(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, firstBroker(), ProducerConfig.TRANSACTIONAL_ID_CONFIG, prefix + "-txn"))) {
            p.initTransactions();
            for (String[] step : new String[][]{{"commit", "a"}, {"abort", "b"}, {"commit", "c"}}) {
                p.beginTransaction();
                for (int i = 0; i < 9; i++) p.send(new ProducerRecord<>(t, i % 3, null, b(step[1] + i)));
                p.flush();
                if (step[0].equals("commit")) p.commitTransaction(); else p.abortTransaction();
            }
        }
        var committed = consume(t, 18, List.of(0, 1, 2), Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, firstBroker(),
            ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"));
        for (int part = 0; part < 3; part++) {
            List<String> want = new ArrayList<>(), have = new ArrayList<>();
            for (String prefixOf : List.of("a", "c")) for (int i = part; i < 9; i += 3) want.add(prefixOf + i);
            for (var r : committed) if (r.partition() == part) have.add(s(r.value()));
            expect(have, want, "read_committed partition " + part);
        }
        expect(consume(t, 27, List.of(0, 1, 2), Map.of()).size(), 27, "read_uncommitted");
    }

    /**
     * One step of not-enough-replicas (compat/clients/java.py drives it): one acks=all record,
     * no retries, to -Dcompat.topic; the result's reason is the error, if any.
     */
    /** Allows the scenario's user {@code ops} on a literal resource (any host), with this client's CreateAcls as the super user; returns once DescribeAcls lists them. */
    static void grant(ResourceType type, String name, AclOperation... ops) throws Exception {
        var pattern = new ResourcePattern(type, name, PatternType.LITERAL);
        List<AclBinding> acls = new ArrayList<>();
        for (var op : ops) acls.add(new AclBinding(pattern, new AccessControlEntry(
            "User:" + userName, "*", op, AclPermissionType.ALLOW)));
        try (Admin a = admin()) {
            a.createAcls(acls).all().get(WAIT_S, TimeUnit.SECONDS);
            waitFor(() -> {
                try {
                    return a.describeAcls(AclBindingFilter.ANY).values().get(WAIT_S, TimeUnit.SECONDS).containsAll(acls);
                } catch (Exception e) {
                    return false;
                }
            }, "the new ACLs listed");
        }
    }

    static void authorization(String prefix) throws Exception {
        if (userName == null) throw new NotApplicable("needs a secured target");
        String t = topic(prefix), group = prefix + "-g";
        // not idempotent: an idempotent producer also needs IDEMPOTENT_WRITE on the cluster
        Map<String, Object> producerConf = new HashMap<>(user);
        producerConf.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false);
        producerConf.put(ProducerConfig.ACKS_CONFIG, "all");
        try (var p = producer(producerConf)) {
            expectFailure(TopicAuthorizationException.class, () -> p.send(new ProducerRecord<>(t, b("refused"))).get(WAIT_S, TimeUnit.SECONDS),
                "produce without an ACL");
        }
        grant(ResourceType.TOPIC, t, AclOperation.WRITE);
        try (var p = producer(producerConf)) {
            List<ProducerRecord<byte[], byte[]>> recs = new ArrayList<>();
            for (String v : values(3, "v")) recs.add(new ProducerRecord<>(t, b(v)));
            sendAll(p, recs);
        }
        try (var c = groupConsumer(group, t, user)) {
            expectFailure(GroupAuthorizationException.class, () -> c.poll(Duration.ofSeconds(WAIT_S)), "consume without an ACL");
        }
        grant(ResourceType.TOPIC, t, AclOperation.READ);
        grant(ResourceType.GROUP, group, AclOperation.READ);
        try (var c = groupConsumer(group, t, user)) {
            List<String> got = new ArrayList<>();
            long deadline = System.nanoTime() + WAIT_S * 1_000_000_000L;
            while (got.size() < 3 && System.nanoTime() < deadline)
                for (var r : c.poll(Duration.ofMillis(500))) got.add(s(r.value()));
            expect(got, values(3, "v"), "records read once allowed");
            c.commitSync();
        }
    }

    static KafkaShareConsumer<byte[], byte[]> shareConsumer(String group, String topic) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.putAll(security);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put("share.acknowledgement.mode", "explicit");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        var c = new KafkaShareConsumer<byte[], byte[]>(p);
        c.subscribe(List.of(topic));
        return c;
    }

    static void shareGroup(String prefix) throws Exception {
        String t = topic(prefix), two = prefix + "-two", acks = prefix + "-acks";
        try (Admin a = admin()) {
            Map<ConfigResource, Collection<AlterConfigOp>> earliest = new HashMap<>();
            for (String g : List.of(two, acks))
                earliest.put(new ConfigResource(ConfigResource.Type.GROUP, g), List.of(new AlterConfigOp(
                    new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET)));
            a.incrementalAlterConfigs(earliest).all().get(WAIT_S, TimeUnit.SECONDS);
        }
        try (var p = producer(Map.of())) {
            List<ProducerRecord<byte[], byte[]>> recs = new ArrayList<>();
            for (String v : values(20, "v")) recs.add(new ProducerRecord<>(t, b(v)));
            sendAll(p, recs);
        }
        Map<Long, Integer> seen = new TreeMap<>();
        try (var a = shareConsumer(two, t); var b = shareConsumer(two, t)) {
            long deadline = System.nanoTime() + WAIT_S * 1_000_000_000L;
            while (seen.size() < 20 && System.nanoTime() < deadline) {
                for (var c : List.of(a, b)) {
                    for (var r : c.poll(Duration.ofMillis(200))) {
                        seen.merge(r.offset(), 1, Integer::sum);
                        c.acknowledge(r, AcknowledgeType.ACCEPT);
                    }
                    c.commitSync();
                }
            }
        }
        expect(seen.size() + " records, at most " + Collections.max(seen.values(), Comparator.naturalOrder()) + " each",
            "20 records, at most 1 each", "records read by two members");
        Map<Long, List<Short>> deliveries = new TreeMap<>();
        Set<Long> done = new TreeSet<>();
        try (var c = shareConsumer(acks, t)) {
            long deadline = System.nanoTime() + WAIT_S * 1_000_000_000L;
            while (done.size() < 19 && System.nanoTime() < deadline) {
                for (var r : c.poll(Duration.ofMillis(200))) {
                    deliveries.computeIfAbsent(r.offset(), k -> new ArrayList<>()).add(r.deliveryCount().orElse((short) -1));
                    if (r.offset() == 0 && deliveries.get(0L).size() < 3) c.acknowledge(r, AcknowledgeType.RELEASE);
                    else if (r.offset() == 1) c.acknowledge(r, AcknowledgeType.REJECT);
                    else {
                        c.acknowledge(r, AcknowledgeType.ACCEPT);
                        done.add(r.offset());
                    }
                }
                c.commitSync();
            }
        }
        expect(deliveries.get(0L) + " " + deliveries.get(1L) + " " + done.size(), "[1, 2, 3] [1] 19",
            "delivery counts of the released and the rejected record, records accepted");
    }

    static void produceAcksAll(String prefix) throws Exception {
        String t = System.getProperty("compat.topic");
        if (t == null) throw new NotApplicable("run by compat/clients/java.py with -Dcompat.topic");
        try (var p = producer(Map.of(ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.RETRIES_CONFIG, 0,
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false))) {
            sendAll(p, List.of(new ProducerRecord<>(t, b(System.getProperty("compat.value", "v")))));
        }
    }

    static final Map<String, Scenario> SCENARIOS = new LinkedHashMap<>();
    static {
        SCENARIOS.put("produce-consume", CompatClient::produceConsume);
        SCENARIOS.put("consumer-group-protocol", CompatClient::consumerGroupProtocol);
        for (String c : List.of("none", "gzip", "snappy", "lz4", "zstd")) SCENARIOS.put("codec-" + c, codec(c));
        SCENARIOS.put("keys-partitioning", CompatClient::keysPartitioning);
        SCENARIOS.put("headers", CompatClient::headers);
        SCENARIOS.put("timestamps-create-time", CompatClient::timestampsCreateTime);
        SCENARIOS.put("timestamps-log-append-time", CompatClient::timestampsLogAppendTime);
        SCENARIOS.put("large-records", CompatClient::largeRecords);
        SCENARIOS.put("offsets-by-time", CompatClient::offsetsByTime);
        SCENARIOS.put("admin-topics", CompatClient::adminTopics);
        SCENARIOS.put("admin-configs", CompatClient::adminConfigs);
        SCENARIOS.put("admin-describe-paging", CompatClient::adminDescribePaging);
        SCENARIOS.put("consumer-group", CompatClient::consumerGroup);
        SCENARIOS.put("offset-commit", CompatClient::offsetCommit);
        SCENARIOS.put("idempotent-producer", CompatClient::idempotentProducer);
        SCENARIOS.put("transactions", CompatClient::transactions);
        SCENARIOS.put("transactions-offsets", CompatClient::transactionsOffsets);
        SCENARIOS.put("transactions-v2", CompatClient::transactionsV2);
        SCENARIOS.put("replicated-acks-all", CompatClient::replicatedAcksAll);
        SCENARIOS.put("leaders-on-several-brokers", CompatClient::leadersOnSeveralBrokers);
        SCENARIOS.put("group-coordinator-elsewhere", CompatClient::groupCoordinatorElsewhere);
        SCENARIOS.put("transaction-across-brokers", CompatClient::transactionAcrossBrokers);
        SCENARIOS.put("not-enough-replicas", CompatClient::produceAcksAll);
        SCENARIOS.put("authorization", CompatClient::authorization);
        SCENARIOS.put("share-group", CompatClient::shareGroup);
    }

    // ------------------------------------------------------------------ driver
    static String json(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            if (ch == '"' || ch == '\\') b.append('\\').append(ch);
            else if (ch < 0x20) b.append(String.format("\\u%04x", (int) ch));
            else b.append(ch);
        }
        return b.append('"').toString();
    }

    static String describe(Throwable e) {
        if (e instanceof ExecutionException && e.getCause() != null) e = e.getCause();
        String msg = e.getMessage() == null ? "" : e.getMessage();
        String where = "";
        for (StackTraceElement el : e.getStackTrace()) {
            if (el.getClassName().startsWith("CompatClient")) { where = " (at CompatClient.java:" + el.getLineNumber() + ")"; break; }
        }
        String text = e instanceof AssertionError ? msg : e.getClass().getSimpleName() + ": " + msg;
        text = text.replaceAll("\\s+", " ").trim();
        if (text.length() > 600) text = text.substring(0, 600);
        return text + where;
    }

    static void report(String name, String status, long nanos, String reason) {
        System.out.println("##RESULT {\"scenario\": " + json(name) + ", \"status\": " + json(status)
            + ", \"seconds\": " + String.format(Locale.ROOT, "%.3f", nanos / 1e9) + ", \"reason\": " + json(reason) + "}");
        System.out.flush();
    }

    public static void main(String[] args) throws Exception {
        bootstrap = args[0];
        String config = System.getProperty("compat.client.config");
        if (config != null) {
            try (var in = new java.io.FileInputStream(config)) { security.load(in); }
        }
        String userConfig = System.getProperty("compat.user.config");
        if (userConfig != null) {
            Properties u = new Properties();
            try (var in = new java.io.FileInputStream(userConfig)) { u.load(in); }
            userName = (String) u.remove("compat.username");
            u.forEach((k, v) -> user.put((String) k, v));
        }
        ExecutorService pool = Executors.newSingleThreadExecutor(r -> { Thread t = new Thread(r); t.setDaemon(true); return t; });
        for (int i = 1; i < args.length; i++) {
            String name = args[i];
            Scenario sc = SCENARIOS.get(name);
            if (sc == null) { report(name, "n/a", 0, ""); continue; }
            String prefix = "compat-" + name + "-java-" + runId;
            long t0 = System.nanoTime();
            Future<?> f = pool.submit(() -> { sc.run(prefix); return null; });
            try {
                f.get(SCENARIO_TIMEOUT_S, TimeUnit.SECONDS);
                report(name, "pass", System.nanoTime() - t0, "");
            } catch (java.util.concurrent.TimeoutException e) {
                f.cancel(true);
                pool = Executors.newSingleThreadExecutor(r -> { Thread t = new Thread(r); t.setDaemon(true); return t; });
                report(name, "fail", System.nanoTime() - t0, "timed out after " + SCENARIO_TIMEOUT_S + "s");
            } catch (ExecutionException e) {
                Throwable c = e.getCause();
                report(name, c instanceof NotApplicable ? "n/a" : "fail", System.nanoTime() - t0, describe(c));
            }
        }
        System.exit(0);
    }
}

import java.io.FileReader;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The Java client over a secured listener: args are the bootstrap servers, a properties file
 * with the client's security settings, and a topic. Produces one record and consumes it back;
 * prints "##SECURE ok VALUE" or "##SECURE error CLASS: MESSAGE" (the root cause).
 */
public class SecureClient {
    public static void main(String[] args) throws Exception {
        Properties security = new Properties();
        try (FileReader r = new FileReader(args[1])) { security.load(r); }
        String topic = args[2];
        try {
            Properties p = new Properties();
            p.putAll(security);
            p.put("bootstrap.servers", args[0]);
            p.put("key.serializer", StringSerializer.class.getName());
            p.put("value.serializer", StringSerializer.class.getName());
            p.put("max.block.ms", "30000");
            try (var producer = new KafkaProducer<String, String>(p)) {
                producer.send(new ProducerRecord<>(topic, "over-java")).get(30, TimeUnit.SECONDS);
            }
            Properties c = new Properties();
            c.putAll(security);
            c.put("bootstrap.servers", args[0]);
            c.put("group.id", topic);
            c.put("auto.offset.reset", "earliest");
            c.put("key.deserializer", StringDeserializer.class.getName());
            c.put("value.deserializer", StringDeserializer.class.getName());
            try (var consumer = new KafkaConsumer<String, String>(c)) {
                consumer.subscribe(List.of(topic));
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (System.nanoTime() < deadline) {
                    for (ConsumerRecord<String, String> rec : consumer.poll(Duration.ofMillis(500))) {
                        System.out.println("##SECURE ok " + rec.value());
                        return;
                    }
                }
                System.out.println("##SECURE error none: nothing consumed");
            }
        } catch (Exception e) {
            Throwable t = e;
            while (t.getCause() != null) t = t.getCause();
            System.out.println("##SECURE error " + t.getClass().getSimpleName() + ": " + t.getMessage());
        }
    }
}

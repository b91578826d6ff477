// One KIP-932 share-group member (kafka-clients 4.4's KafkaShareConsumer, explicit
// acknowledgement) for tests that mix it with other clients: prints "##READY" once
// subscribed, "##R <partition> <offset> <delivery count>" for every record it ACCEPTs, and
// stops at a line on stdin ("##DONE").  Args: bootstrap topic group.
import java.io.*;
import java.time.Duration;
import java.util.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.common.serialization.*;

public class ShareGroupMember {
    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", args[0]);
        p.put("group.id", args[2]);
        p.put("share.acknowledgement.mode", "explicit");
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in));
        try (KafkaShareConsumer<String, String> c = new KafkaShareConsumer<>(p)) {
            c.subscribe(List.of(args[1]));
            c.poll(Duration.ofMillis(100));
            System.out.println("##READY");
            System.out.flush();
            while (!stdin.ready()) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    c.acknowledge(r, AcknowledgeType.ACCEPT);
                    System.out.println("##R " + r.partition() + " " + r.offset() + " "
                                       + r.deliveryCount().orElse((short) -1));
                }
                c.commitSync();
                System.out.flush();
            }
        }
        System.out.println("##DONE");
    }
}

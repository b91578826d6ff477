// A transaction aborted before its one record left the producer: with transaction version 2 the
// Java producer has started the transaction once send() placed the record, so abortTransaction()
// drops the undrained batch and sends EndTxn v5 while the coordinator still has the id Empty
// (what franz-go does when a first produce fails).  A second transaction then commits a record.
//
//   java -cp <kafka-clients jars> EmptyAbortProbe.java BOOTSTRAP TOPIC TRANSACTIONAL_ID
//
// Output: "##ABORT OK" or "##ABORT ERROR <exception class>", then the same for "##COMMIT".
import java.util.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class EmptyAbortProbe {
    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, args[2]);
        // the batch waits for linger.ms: it is still in the producer when the abort comes
        props.put(ProducerConfig.LINGER_MS_CONFIG, "600000");
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "60000");
        try (var p = new KafkaProducer<byte[], byte[]>(props, new ByteArraySerializer(),
                                                      new ByteArraySerializer())) {
            p.initTransactions();
            p.beginTransaction();
            p.send(new ProducerRecord<>(args[1], 0, null, "dropped".getBytes()));
            report("ABORT", p::abortTransaction);
            report("COMMIT", () -> {
                p.beginTransaction();
                p.send(new ProducerRecord<>(args[1], 0, null, "kept".getBytes()));
                p.commitTransaction();
            });
        }
    }

    static void report(String step, Runnable r) {
        try {
            r.run();
            System.out.println("##" + step + " OK");
        } catch (RuntimeException e) {
            System.out.println("##" + step + " ERROR " + e.getClass().getSimpleName());
        }
    }
}

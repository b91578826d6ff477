// Prints what the Java Admin's listConfigResources (KIP-1142) answers, one line per query, so
// that a test can ask pykafkad and Apache Kafka the same questions and compare.
//
//   java -cp <kafka-clients jars> ConfigResourcesProbe.java BOOTSTRAP QUERY...
//
// A QUERY is ALL (no types named: every type) or a comma-separated list of
// ConfigResource.Type names.  Output: "##ANSWER <query> OK <type>:<name> ..." (sorted) or
// "##ANSWER <query> ERROR <exception class>".
import java.util.*;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.common.config.ConfigResource;

public class ConfigResourcesProbe {
    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
        try (Admin admin = Admin.create(props)) {
            for (int i = 1; i < args.length; i++) {
                String query = args[i];
                Set<ConfigResource.Type> types = new HashSet<>();
                if (!query.equals("ALL")) {
                    for (String t : query.split(",")) types.add(ConfigResource.Type.valueOf(t));
                }
                try {
                    Collection<ConfigResource> got = admin
                        .listConfigResources(types, new ListConfigResourcesOptions())
                        .all().get(60, TimeUnit.SECONDS);
                    List<String> names = new ArrayList<>();
                    for (ConfigResource r : got) names.add(r.type() + ":" + r.name());
                    Collections.sort(names);
                    System.out.println("##ANSWER " + query + " OK " + String.join(" ", names));
                } catch (ExecutionException e) {
                    System.out.println("##ANSWER " + query + " ERROR " + e.getCause().getClass().getSimpleName());
                }
            }
        }
    }
}

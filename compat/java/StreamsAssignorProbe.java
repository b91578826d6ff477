import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.kafka.coordinator.group.api.streams.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.TopologyDescriber;
import org.apache.kafka.coordinator.group.streams.assignor.AssignmentConfigsImpl;
import org.apache.kafka.coordinator.group.streams.assignor.GroupSpecImpl;
import org.apache.kafka.coordinator.group.streams.assignor.MemberMetadataAndStateImpl;
import org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor;

/**
 * Runs Apache Kafka's own streams task assignor (the broker's group-coordinator jar) on groups
 * read from stdin, so tests can compare pykafkad's assignor with it.  One case per block:
 *
 *   standby N
 *   sub ID PARTITIONS STATEFUL(0|1)
 *   member ID PROCESS ACTIVE STANDBY OFFSETS     (tasks as sub:p,... ; offsets as sub:p=n,... ; - for none)
 *   end
 *
 * Members are put into a HashMap in the order given, as Kafka's TargetAssignmentBuilder does.
 * For each case it prints one "member ID ACTIVE STANDBY" line per member (sorted), then "done".
 */
public class StreamsAssignorProbe {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        int standby = 0;
        Map<String, int[]> subs = new TreeMap<>();
        Map<String, MemberMetadataAndStateImpl> members = new HashMap<>();
        List<String> order = new ArrayList<>();
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.trim().split(" ");
            switch (f[0]) {
                case "standby" -> standby = Integer.parseInt(f[1]);
                case "sub" -> subs.put(f[1], new int[]{Integer.parseInt(f[2]), Integer.parseInt(f[3])});
                case "member" -> {
                    members.put(f[1], new MemberMetadataAndStateImpl(Optional.empty(), Optional.empty(), f[2],
                        Map.of(), tasks(f[3]), tasks(f[4]), Map.of(), offsets(f[5]), Map.of()));
                    order.add(f[1]);
                }
                case "end" -> {
                    final Map<String, int[]> topology = subs;
                    TopologyDescriber describer = new TopologyDescriber() {
                        public List<String> subtopologies() {
                            return new ArrayList<>(topology.keySet());
                        }

                        public int maxNumInputPartitions(String s) {
                            return topology.get(s)[0];
                        }

                        public boolean isStateful(String s) {
                            return topology.get(s)[1] == 1;
                        }
                    };
                    GroupAssignment result = new StickyTaskAssignor().assign(
                        new GroupSpecImpl(members, new AssignmentConfigsImpl(standby, List.of())), describer);
                    for (String id : new TreeSet<>(result.members().keySet())) {
                        MemberAssignment a = result.members().get(id);
                        System.out.println("member " + id + " " + format(a.activeTasks()) + " " + format(a.standbyTasks()));
                    }
                    System.out.println("done");
                    System.out.flush();
                    standby = 0;
                    subs = new TreeMap<>();
                    members = new HashMap<>();
                    order = new ArrayList<>();
                }
                default -> { }
            }
        }
    }

    private static Map<String, Set<Integer>> tasks(String s) {
        Map<String, Set<Integer>> out = new HashMap<>();
        if (!s.equals("-")) {
            for (String t : s.split(",")) {
                String[] sp = t.split(":");
                out.computeIfAbsent(sp[0], k -> new HashSet<>()).add(Integer.parseInt(sp[1]));
            }
        }
        return out;
    }

    private static Map<String, Map<Integer, Long>> offsets(String s) {
        Map<String, Map<Integer, Long>> out = new HashMap<>();
        if (!s.equals("-")) {
            for (String t : s.split(",")) {
                String[] kv = t.split("=");
                String[] sp = kv[0].split(":");
                out.computeIfAbsent(sp[0], k -> new HashMap<>()).put(Integer.parseInt(sp[1]), Long.parseLong(kv[1]));
            }
        }
        return out;
    }

    private static String format(Map<String, Set<Integer>> tasks) {
        List<String> out = new ArrayList<>();
        for (String s : new TreeSet<>(tasks.keySet())) {
            for (int p : new TreeSet<>(tasks.get(s))) {
                out.add(s + ":" + p);
            }
        }
        return out.isEmpty() ? "-" : String.join(",", out);
    }
}

package io.millrace.bench.scenario;

import io.millrace.examples.chat.v1.ChatMessage;
import io.millrace.examples.chat.v1.CreateRequest;
import io.millrace.examples.chat.v1.FindByIdRequest;
import io.millrace.examples.chat.v1.RemoveRequest;
import io.millrace.examples.chat.v1.UpdateRequest;
import java.util.concurrent.Callable;
import java.util.function.IntConsumer;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The client process of the CRUD scenario: one connection, one thread, synchronous calls. Creates
 * {@code ops} messages, then updates, finds and removes each (four phases of {@code ops} calls),
 * after the same program at {@code warmup-ops}. Prints {@code OP <operation> <latency line>} per
 * operation, {@code TOTAL <nanoseconds>} and its {@code GC} line. Every answer is checked.
 */
@Command(name = "crud-drive", hidden = true, description = "Client process of the CRUD scenario.")
public final class CrudDriveCommand implements Callable<Integer> {
  static final String[] OPERATIONS = {"create", "update", "findById", "remove"};

  @Option(names = "--system", required = true)
  String system;

  @Option(names = "--port", required = true)
  int port;

  @Option(names = "--ops", defaultValue = "25000")
  int ops;

  @Option(names = "--warmup-ops", defaultValue = "5000")
  int warmupOps;

  @Override
  public Integer call() throws Exception {
    try (CrudSystems.ChatCalls chat = CrudSystems.connect(system, port)) {
      run(chat, warmupOps, null);
      Histogram[] latencies = new Histogram[OPERATIONS.length];
      for (int i = 0; i < latencies.length; i++) {
        latencies[i] = Latency.histogram();
      }
      long start = System.nanoTime();
      run(chat, ops, latencies);
      long total = System.nanoTime() - start;
      for (int i = 0; i < OPERATIONS.length; i++) {
        System.out.println("OP " + OPERATIONS[i] + " " + Latency.line(latencies[i]));
      }
      System.out.println("TOTAL " + total);
      System.out.println(Latency.gcLine());
    }
    return 0;
  }

  /** The four phases of {@code n} calls each; latencies recorded when given. */
  private static void run(CrudSystems.ChatCalls chat, int n, Histogram[] latencies) {
    String[] ids = new String[n];
    phase(
        n,
        latencies == null ? null : latencies[0],
        i -> {
          ChatMessage m = chat.create(CreateRequest.newBuilder().setText("message " + i).build());
          ids[i] = m.getId();
        });
    phase(
        n,
        latencies == null ? null : latencies[1],
        i -> {
          ChatMessage m =
              chat.update(UpdateRequest.newBuilder().setId(ids[i]).setText("edited " + i).build());
          check(m.getText().equals("edited " + i), "update answered " + m);
        });
    phase(
        n,
        latencies == null ? null : latencies[2],
        i -> {
          ChatMessage m = chat.findById(FindByIdRequest.newBuilder().setId(ids[i]).build());
          check(m.getText().equals("edited " + i), "findById answered " + m);
        });
    phase(
        n,
        latencies == null ? null : latencies[3],
        i ->
            check(
                chat.remove(RemoveRequest.newBuilder().setId(ids[i]).build()).getRemoved(),
                "remove of " + ids[i] + " removed nothing"));
  }

  private static void phase(int n, Histogram latency, IntConsumer call) {
    for (int i = 0; i < n; i++) {
      long start = System.nanoTime();
      call.accept(i);
      if (latency != null) {
        latency.recordValue(System.nanoTime() - start);
      }
    }
  }

  private static void check(boolean ok, String what) {
    if (!ok) {
      throw new IllegalStateException(what);
    }
  }
}

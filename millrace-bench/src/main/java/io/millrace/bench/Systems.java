package io.millrace.bench;

import io.millrace.bench.millrace.MillraceSystem;
import java.lang.management.ManagementFactory;
import java.util.List;

/** The systems the harness knows, and the JVM-wide counters it reads. */
public final class Systems {
  static final List<String> NAMES =
      List.of(
          "millrace",
          "millrace-resume",
          "millrace-reactor",
          "millrace-rxjava",
          "millrace-mutiny",
          "millrace-observer",
          "millrace-futures",
          "millrace-rpc",
          "millrace-rpc-rxjava",
          "millrace-rpc-mutiny",
          "millrace-rpc-futures",
          "millrace-rpc-observer",
          "grpc-java",
          "grpc-java-rpc",
          "grpc-java-to-millrace",
          "millrace-grpc-stubs",
          "rsocket-java");

  private Systems() {}

  public static BenchSystem byName(String name) {
    switch (name) {
      case "millrace":
        return new MillraceSystem(false);
      case "millrace-resume":
        return new MillraceSystem(true); // resumption on, no disconnects: what it costs
      case "millrace-reactor":
        return new io.millrace.bench.millrace.MillraceReactorSystem();
      case "millrace-rxjava":
        return new io.millrace.bench.millrace.MillraceRxJavaSystem();
      case "millrace-mutiny":
        return new io.millrace.bench.millrace.MillraceMutinySystem();
      case "millrace-observer":
        return new io.millrace.bench.millrace.MillraceObserverSystem();
      case "millrace-futures":
        return new io.millrace.bench.millrace.MillraceFuturesSystem();
      case "millrace-rpc":
        return new io.millrace.bench.millrace.MillraceRpcSystem();
      case "millrace-rpc-rxjava":
        return new io.millrace.bench.millrace.MillraceRpcRxJavaSystem();
      case "millrace-rpc-mutiny":
        return new io.millrace.bench.millrace.MillraceRpcMutinySystem();
      case "millrace-rpc-futures":
        return new io.millrace.bench.millrace.MillraceRpcFuturesSystem();
      case "millrace-rpc-observer":
        return new io.millrace.bench.millrace.MillraceRpcObserverSystem();
      case "grpc-java":
        return instantiate("io.millrace.bench.grpc.GrpcSystem");
      case "grpc-java-rpc":
        return io.millrace.bench.grpc.GrpcSystem.rpcLevel();
      case "grpc-java-to-millrace":
        return io.millrace.bench.grpc.GrpcSystem.millraceEndpoint();
      case "millrace-grpc-stubs":
        return new io.millrace.bench.millrace.MillraceGrpcStubsSystem();
      case "rsocket-java":
        return instantiate("io.millrace.bench.rsocket.RSocketJavaSystem");
      default:
        throw new IllegalArgumentException("unknown system '" + name + "': use " + NAMES);
    }
  }

  private static BenchSystem instantiate(String className) {
    try {
      return (BenchSystem) Class.forName(className).getDeclaredConstructor().newInstance();
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot load " + className, e);
    }
  }

  /** CPU time this process has used so far, all threads, in nanoseconds. */
  public static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  /**
   * A bench process's once-a-second line: {@code TICK <millis> <messages> <bytes allocated> <CPU
   * ns> <GC ms> <JIT ms>}, the last four this JVM's totals so far.
   */
  public static String tick(long millis, long messages) {
    return "TICK "
        + millis
        + " "
        + messages
        + " "
        + allocatedBytes()
        + " "
        + processCpuNanos()
        + " "
        + gcMillis()
        + " "
        + jitMillis();
  }

  /**
   * Milliseconds this JVM's just-in-time compilers report having spent so far, -1 when it does not
   * tell. A bench process pinned to one core compiles on that core: compilations still running
   * after the warm-up take time from the measured window, and a heavy system's C2 queue can take
   * more than 4 seconds to drain there.
   */
  public static long jitMillis() {
    java.lang.management.CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
    return jit != null && jit.isCompilationTimeMonitoringSupported()
        ? jit.getTotalCompilationTime()
        : -1;
  }

  /**
   * Milliseconds this JVM's collectors report having spent so far (their pauses; with G1 on JDK 17,
   * its concurrent marking is not counted).
   */
  public static long gcMillis() {
    long millis = 0;
    for (java.lang.management.GarbageCollectorMXBean gc :
        ManagementFactory.getGarbageCollectorMXBeans()) {
      millis += Math.max(0, gc.getCollectionTime());
    }
    return millis;
  }

  /** Bytes allocated on the heap by all threads of this JVM so far (HotSpot's counter). */
  public static long allocatedBytes() {
    return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean())
        .getTotalThreadAllocatedBytes();
  }
}

package io.millrace.bench.jmh;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * What a Reactor user's {@code requester.fireAndForget(p).subscribe()} costs in Reactor itself: a
 * Mono over a one-shot Publisher that completes at once, subscribed with no arguments. No
 * connection. {@code mixed=true} first runs other shapes through the same Reactor code (a Flux, a
 * subscriber with callbacks), as any service does; {@code mixed=false} measures a JVM that has seen
 * only this one. Run it on each installed JDK ({@code -jvm /path/to/java}): before JDK 23 the JVM's
 * interface type checks depend on a one-entry cache per class, which a mix of types defeats
 * (JDK-8180450).
 *
 * <pre>java -jar millrace-bench/target/millrace-bench.jar jmh ReactorSubscribe</pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class ReactorSubscribeBenchmark {
  @Param({"false", "true"})
  boolean mixed;

  @Setup(Level.Trial)
  public void mixTypes() {
    if (mixed) {
      for (int i = 0; i < 200_000; i++) {
        Flux.from(new OneShot()).subscribe();
        Mono.fromDirect(new OneShot()).subscribe(v -> {}, e -> {});
        Mono.from(new OneShot()).subscribe();
      }
    }
  }

  @Benchmark
  public Disposable fireAndForgetSubscribe() {
    return Mono.fromDirect(new OneShot()).subscribe();
  }

  /** Completes once subscribed, as the engine's fire-and-forget does once the call is handed on. */
  static final class OneShot implements Publisher<Void>, Subscription {
    private volatile boolean cancelled;

    @Override
    public void subscribe(Subscriber<? super Void> s) {
      s.onSubscribe(this);
      if (!cancelled) {
        s.onComplete();
      }
    }

    @Override
    public void request(long n) {}

    @Override
    public void cancel() {
      cancelled = true;
    }
  }
}

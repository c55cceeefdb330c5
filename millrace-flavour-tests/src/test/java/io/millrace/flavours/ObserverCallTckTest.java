package io.millrace.flavours;

import io.millrace.observer.internal.ObserverCall;
import io.netty.channel.DefaultEventLoop;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import org.testng.annotations.AfterClass;
import org.testng.annotations.Factory;

/**
 * The Reactive Streams TCK on the Publisher through which a StreamObserver call's sent values reach
 * the engine's sink: a responder's answer ({@link ObserverCall#serving}, the handler run as the
 * sink subscribes) and a requester's channel values ({@link ObserverCall#outbound}). The
 * application's side is a thread calling {@code onNext} for each element, as a handler on an
 * executor does: held back past the call's bound until the subscriber asks, and stopped by a
 * cancel.
 */
public class ObserverCallTckTest extends PublisherVerification<Integer> {
  private static final DefaultEventLoop LOOP = new DefaultEventLoop();
  private static final ExecutorService PRODUCERS =
      Executors.newCachedThreadPool(
          r -> {
            Thread t = new Thread(r, "tck-producer");
            t.setDaemon(true);
            return t;
          });
  private static final int PREFETCH = 16;

  private final String name;
  private final boolean requester;

  @Factory
  public static Object[] all() {
    return new Object[] {
      new ObserverCallTckTest("responder serving", false),
      new ObserverCallTckTest("requester outbound", true),
    };
  }

  public ObserverCallTckTest(String name, boolean requester) {
    super(new TestEnvironment(2_000, 50));
    this.name = name;
    this.requester = requester;
  }

  @AfterClass
  public static void stop() {
    PRODUCERS.shutdownNow();
    LOOP.shutdownGracefully();
  }

  /** Values are Integers: nothing to release. */
  static final ObserverCall.Rules INTEGERS =
      new ObserverCall.Rules() {
        @Override
        public void release(Object value) {}

        @Override
        public RuntimeException cancelled(String message) {
          return new IllegalStateException(message);
        }

        @Override
        public RuntimeException overrun(String message) {
          return new IllegalStateException(message);
        }
      };

  @Override
  public Publisher<Integer> createPublisher(long elements) {
    return publisher(
        call -> {
          for (long i = 0;
              i < elements && !call.isCancelled() && !Thread.currentThread().isInterrupted();
              i++) {
            call.onNext((int) i);
          }
          call.onCompleted();
        });
  }

  @Override
  public Publisher<Integer> createFailedPublisher() {
    return publisher(call -> call.onError(new IllegalStateException("failed on purpose")));
  }

  /** A call whose application side, on a thread of its own, does {@code produce}. */
  private Publisher<Integer> publisher(
      java.util.function.Consumer<ObserverCall<Integer, Void>> produce) {
    ObserverCall<Integer, Void> call =
        new ObserverCall<>(LOOP, INTEGERS, PREFETCH, true, requester);
    call.setOnCancelHandler(() -> {}); // a cancelled responder's onNext then drops quietly
    Runnable application = () -> PRODUCERS.execute(() -> produce.accept(call));
    if (!requester) {
      return call.serving(application);
    }
    Publisher<Integer> outbound = call.outbound();
    java.util.concurrent.atomic.AtomicBoolean started =
        new java.util.concurrent.atomic.AtomicBoolean();
    return subscriber -> {
      outbound.subscribe(subscriber); // a second subscriber is refused: one application
      if (started.compareAndSet(false, true)) {
        application.run();
      }
    };
  }

  @Override
  public String toString() {
    return name;
  }
}

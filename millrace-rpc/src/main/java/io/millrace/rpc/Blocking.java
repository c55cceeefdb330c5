package io.millrace.rpc;

import io.netty.util.internal.ThreadExecutorMap;
import java.util.Iterator;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * What the generated CompletableFuture and blocking code stands on: calls as futures, blocking
 * waits, iterators and sinks, and handlers run on an executor (virtual threads suit them).
 */
public final class Blocking {
  private Blocking() {}

  /**
   * The call's one response (or its completion, for fire-and-forget) as a future. Cancelling it,
   * timing it out or completing it yourself cancels the call. It completes on the connection's
   * event loop: dependent stages added without {@code ...Async} run there, so they must not block
   * (never {@code join()} another call in them); use the {@code ...Async} stages with an executor
   * for work that waits.
   */
  public static <T> CompletableFuture<T> future(Publisher<T> call) {
    CompletableFuture<T> future = new CompletableFuture<>();
    call.subscribe(
        new Subscriber<T>() {
          private T value;
          private volatile boolean ended;

          @Override
          public void onSubscribe(Subscription s) {
            future.whenComplete(
                (v, e) -> {
                  if (!ended) { // cancelled, timed out or completed by its holder: stop the call
                    s.cancel();
                  }
                });
            s.request(Long.MAX_VALUE);
          }

          @Override
          public void onNext(T t) {
            value = t;
          }

          @Override
          public void onError(Throwable t) {
            ended = true;
            future.completeExceptionally(t);
          }

          @Override
          public void onComplete() {
            ended = true;
            future.complete(value);
          }
        });
    return future;
  }

  /**
   * Waits for the call's one response; a failure is thrown as {@link StatusException}, an interrupt
   * cancels the call (CANCELLED, the interrupt flag kept). Refused on an event loop.
   */
  public static <T> T await(Publisher<T> call) {
    if (ThreadExecutorMap.currentExecutor() != null) {
      throw new IllegalStateException("a blocking call on an event loop would stall it");
    }
    CompletableFuture<T> future = future(call);
    try {
      return future.get();
    } catch (InterruptedException e) {
      future.cancel(false);
      Thread.currentThread().interrupt();
      throw Status.CANCELLED.withMessage("interrupted").asException();
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      throw cause instanceof StatusException se
          ? se // with its trailers
          : ResponseReader.statusOf(cause).asException();
    }
  }

  /** The call's responses, read by blocking. */
  public static <T> MessageIterator<T> iterator(Publisher<T> call) {
    return subscribed(call, new MessageIterator<>(null));
  }

  private static <T> MessageIterator<T> subscribed(Publisher<T> call, MessageIterator<T> iterator) {
    call.subscribe(iterator);
    return iterator;
  }

  /**
   * A blocking handler's requests: the iterator ends with the call's cancellation (CANCELLED or
   * DEADLINE_EXCEEDED) when the call is cancelled, so a handler waiting for a request wakes.
   */
  public static <T> MessageIterator<T> requests(Publisher<T> requests, ServerContext context) {
    // What waits is charged to the call's connection: the requests' Publisher does not tell it.
    MessageIterator<T> iterator =
        subscribed(requests, new MessageIterator<>(context.unreadBudget()));
    context.onCancel(
        () -> {
          Status why = context.cancellation();
          iterator.abort((why != null ? why : Status.CANCELLED).asException());
        });
    return iterator;
  }

  /**
   * A stream of requests taken from {@code requests} as the call asks for them. The Iterable is
   * read on a thread of its own (a virtual thread where the JDK has them), never on an event loop,
   * so it may block waiting for its next element.
   */
  public static <T> Publisher<T> fromIterable(Iterable<T> requests) {
    return subscriber -> {
      IterablePull<T> pull = new IterablePull<>(requests, subscriber);
      subscriber.onSubscribe(pull);
    };
  }

  /**
   * Where {@link #fromIterable} reads: virtual threads, else a cached pool, not a {@link
   * HandlerPool}: every Iterable that blocks holds a thread for as long as its call lasts, and this
   * executor is shared by the whole process, so it must not have a cap. Its hand-off cost is paid
   * once per burst of demand, not per message.
   */
  private static final Executor PULLER =
      virtualThreads()
          .orElseGet(
              () ->
                  Executors.newCachedThreadPool(
                      r -> {
                        Thread t = new Thread(r, "millrace-rpc-requests");
                        t.setDaemon(true);
                        return t;
                      }));

  /** Handlers a {@link #newHandlerExecutor} runs at once where the JDK has no virtual threads. */
  public static final int MAX_PLATFORM_HANDLERS = 1024;

  /**
   * An executor for blocking handlers: a virtual thread per task on JDK 21+, else a pool of up to
   * {@value #MAX_PLATFORM_HANDLERS} running handlers on daemon threads named {@code name-N} (more
   * wait their turn), whose hand-off wakes a thread only when its queue was empty (a cached thread
   * pool wakes one per call; see {@link HandlerPool} for how its threads behave). A server that
   * needs more handlers blocked at once on JDK 17 binds its service with an executor of its own.
   */
  public static ExecutorService newHandlerExecutor(String name) {
    return virtualThreads().orElseGet(() -> new HandlerPool(name));
  }

  private static Optional<ExecutorService> virtualThreads() {
    try {
      return Optional.of(
          (ExecutorService)
              Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null));
    } catch (ReflectiveOperationException e) {
      return Optional.empty();
    }
  }

  /** Reads an Iterable on {@link #PULLER} while there is demand; one reader at a time. */
  private static final class IterablePull<T> implements Subscription, Runnable {
    private final Iterable<T> iterable;
    private final Subscriber<? super T> subscriber;
    private final AtomicLong requested = new AtomicLong();
    private final AtomicInteger wip = new AtomicInteger();
    private volatile boolean cancelled;
    private volatile long invalid;
    private Iterator<T> iterator;

    IterablePull(Iterable<T> iterable, Subscriber<? super T> subscriber) {
      this.iterable = iterable;
      this.subscriber = subscriber;
    }

    @Override
    public void request(long n) {
      if (n <= 0) {
        invalid = n == 0 ? -1 : n;
      } else {
        requested.getAndUpdate(r -> r + n < 0 ? Long.MAX_VALUE : r + n);
      }
      schedule();
    }

    @Override
    public void cancel() {
      cancelled = true;
    }

    private void schedule() {
      if (wip.getAndIncrement() == 0) {
        try {
          PULLER.execute(this);
        } catch (RejectedExecutionException e) {
          cancelled = true;
          subscriber.onError(e);
        }
      }
    }

    @Override
    public void run() {
      int missed = 1;
      try {
        while (true) {
          if (invalid != 0) {
            cancelled = true;
            subscriber.onError(
                new IllegalArgumentException("request-n must be positive (rule 3.9): " + invalid));
            return;
          }
          long r = requested.get();
          long emitted = 0;
          while (emitted != r) {
            if (cancelled) {
              return;
            }
            if (iterator == null) {
              iterator = iterable.iterator();
            }
            if (!iterator.hasNext()) {
              cancelled = true;
              subscriber.onComplete();
              return;
            }
            T next = iterator.next();
            if (next == null) {
              cancelled = true;
              subscriber.onError(new NullPointerException("a null request"));
              return;
            }
            subscriber.onNext(next);
            emitted++;
          }
          if (emitted != 0 && r != Long.MAX_VALUE) {
            requested.addAndGet(-emitted);
          }
          missed = wip.addAndGet(-missed);
          if (missed == 0) {
            return;
          }
        }
      } catch (Throwable t) { // the Iterable failed: the call fails with it
        cancelled = true;
        subscriber.onError(t);
        if (t instanceof Error e) {
          throw e;
        }
      }
    }
  }

  /**
   * A handler's one response, computed on {@code executor} from the moment the Publisher is
   * subscribed (once: a second subscriber is refused) and sent when the call asks for it. A handler
   * that returns null ends the call as a reactive one that completes empty does (INTERNAL,
   * "completed without a response"), not with the NullPointerException of sending null (UNKNOWN).
   */
  public static <T> Publisher<T> onExecutor(Executor executor, Supplier<T> handler) {
    return new ExecutorUnary<>(executor, handler);
  }

  /** A handler that returns nothing (fire-and-forget), run on {@code executor}. */
  public static Publisher<Void> runOnExecutor(Executor executor, Runnable handler) {
    return ResponseSink.<Void>publisher(executor, sink -> handler.run());
  }

  /** A handler's stream of responses, sent through a sink on {@code executor}. */
  public static <T> Publisher<T> streamOnExecutor(
      Executor executor, Consumer<ResponseSink<T>> handler) {
    return ResponseSink.publisher(executor, handler);
  }
}

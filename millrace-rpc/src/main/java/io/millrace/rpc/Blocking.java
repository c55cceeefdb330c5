package io.millrace.rpc;

import io.netty.util.internal.ThreadExecutorMap;
import java.util.Iterator;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
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
  /** Messages a {@link MessageIterator} lets wait. */
  public static final int PREFETCH = 32;

  private Blocking() {}

  /**
   * The call's one response (or its completion, for fire-and-forget) as a future; cancelling it
   * cancels the call.
   */
  public static <T> CompletableFuture<T> future(Publisher<T> call) {
    CompletableFuture<T> future = new CompletableFuture<>();
    call.subscribe(
        new Subscriber<T>() {
          private T value;

          @Override
          public void onSubscribe(Subscription s) {
            future.whenComplete(
                (v, e) -> {
                  if (e instanceof CancellationException) {
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
            future.completeExceptionally(t);
          }

          @Override
          public void onComplete() {
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
      throw cause instanceof StatusException se ? se : Status.fromThrowable(cause).asException();
    }
  }

  /** The call's responses, read by blocking. */
  public static <T> MessageIterator<T> iterator(Publisher<T> call) {
    MessageIterator<T> iterator = new MessageIterator<>(PREFETCH);
    call.subscribe(iterator);
    return iterator;
  }

  /** A stream of requests taken from {@code requests} as the call asks for them. */
  public static <T> Publisher<T> fromIterable(Iterable<T> requests) {
    return subscriber -> {
      Iterator<T> it = requests.iterator();
      subscriber.onSubscribe(
          new Subscription() {
            private long requested;
            private boolean emitting;
            private volatile boolean cancelled;

            @Override
            public void request(long n) {
              synchronized (this) {
                requested = requested + n < 0 ? Long.MAX_VALUE : requested + n;
                if (emitting) {
                  return;
                }
                emitting = true;
              }
              while (true) {
                synchronized (this) {
                  if (requested == 0 || cancelled) {
                    emitting = false;
                    return;
                  }
                  requested--;
                }
                T next;
                try {
                  if (!it.hasNext()) {
                    cancelled = true;
                    subscriber.onComplete();
                    return;
                  }
                  next = it.next();
                } catch (RuntimeException e) {
                  cancelled = true;
                  subscriber.onError(e);
                  return;
                }
                subscriber.onNext(next);
              }
            }

            @Override
            public void cancel() {
              cancelled = true;
            }
          });
    };
  }

  /** A handler's one response computed on {@code executor} when the call asks for it. */
  public static <T> Publisher<T> onExecutor(Executor executor, Supplier<T> handler) {
    return ResponseSink.publisher(executor, sink -> sink.send(handler.get()));
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

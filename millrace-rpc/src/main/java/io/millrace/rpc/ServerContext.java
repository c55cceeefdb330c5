package io.millrace.rpc;

import io.millrace.core.internal.UnreadBudget;
import io.millrace.observer.internal.StreamHandlers;
import io.millrace.streams.ReactiveResponder;
import io.netty.util.concurrent.EventExecutor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * What a handler knows about its call and can add to the answer: the method, the request headers,
 * the deadline, whether the call was cancelled (by the caller, by its deadline or by the connection
 * closing), and the response headers and trailers to send.
 *
 * <p>Response headers go out with the first response, trailers with the end of the call: set them
 * before (for a unary method, trailers set after its response is emitted are not sent).
 *
 * <p>Values for the handler ({@link Key}): an interceptor that learns something about the call (the
 * caller's identity, a trace id) puts it here, and the handler reads it from its context, on
 * whatever thread each runs. Thread-locals set in {@link ServerInterceptor#onCall} reach only a
 * handler that runs on the same thread, which a StreamObserver stream handler on the shared
 * stream-handler executor does not.
 *
 * <pre>{@code
 * static final ServerContext.Key<String> USER = ServerContext.Key.named("user");
 * // in an interceptor's onCall:
 * call.put(USER, tokens.user(call.requestHeaders().get("authorization")));
 * // in the handler:
 * String user = context.get(USER);
 * }</pre>
 */
public final class ServerContext {
  /**
   * The name of a value a call carries for its handler ({@link #put}, {@link #get}). Keys are
   * compared by identity, as grpc-java's {@code Context.Key}s are: keep each in a static final
   * field; two keys of one name are two keys.
   */
  public static final class Key<T> {
    private final String name;

    private Key(String name) {
      this.name = java.util.Objects.requireNonNull(name, "name");
    }

    /** A new key; {@code name} is for messages only. */
    public static <T> Key<T> named(String name) {
      return new Key<>(name);
    }

    @Override
    public String toString() {
      return name;
    }
  }

  /**
   * What a call has from its connection: its loop, prefetch, TLS session (asked when wanted: after
   * a resume, the new connection's), where its StreamObserver stream handlers run when the server
   * has no executor (the connection's share of the shared executor), and the caller's address when
   * the call was read (on arrival, or when a handler executor's thread took it up), and the
   * connection's budget of bytes waiting for readers (null without a connection). A connection
   * makes one, and another when its peer's address changes (a resumed connection): a call keeps the
   * one it was read with.
   */
  record Origin(
      EventExecutor loop,
      int prefetch,
      java.util.function.Supplier<javax.net.ssl.SSLSession> tlsSession,
      java.util.concurrent.Executor streamHandlers,
      java.net.SocketAddress remoteAddress,
      UnreadBudget unread) {

    /** This origin with the caller at {@code at} (itself when the address is the same). */
    Origin at(java.net.SocketAddress at) {
      return java.util.Objects.equals(at, remoteAddress) // (the same object, most often)
          ? this
          : new Origin(loop, prefetch, tlsSession, streamHandlers, at, unread);
    }
  }

  // A server allocates one of these per call: the fields every call uses are here, the rest in
  // Extras, made when first used (a call with neither headers to send, cancel hooks nor values,
  // which is most, has none; a cancel alone needs none). 40 bytes with compressed pointers, where
  // all in one was 64. The caller's address is in the origin, which a call keeps: when a resumed
  // connection's address changes, a call keeps the one it was read with.
  private final ServerMethod<?, ?> served;
  private final Headers requestHeaders;
  private final long deadlineNanos;
  private final boolean hasDeadline;
  private final boolean noMessage;
  private boolean intercepted; // written and read on the thread that runs the handler
  private final Origin origin;

  /**
   * Null; the {@link Status} the call was cancelled with while it had no extras (so that a cancel
   * allocates nothing); or the extras, which then hold that status.
   */
  private volatile Object extras;

  /** What few calls use, made once ({@link #extras()}). */
  private static final class Extras {
    Headers responseHeaders; // the handler's thread
    Headers trailers; // the handler's thread
    List<Runnable> onCancel; // under the context's lock

    /** CANCELLED or DEADLINE_EXCEEDED once cancelled (written under the context's lock). */
    volatile Status cancelledWith;

    /**
     * The values put for the handler: key, value, key, value, ...; replaced whole on each put, so a
     * reader on another thread sees a whole set.
     */
    volatile Object[] values;
  }

  /**
   * A call with no Millrace connection behind it (bridged from gRPC, or a test's): its
   * StreamObserver stream handlers run on the shared executor under the pool's own cap, with no
   * connection's share.
   */
  ServerContext(
      ServerMethod<?, ?> served,
      Headers requestHeaders,
      long timeoutMicros,
      EventExecutor loop,
      int prefetch,
      java.net.SocketAddress remoteAddress,
      java.util.function.Supplier<javax.net.ssl.SSLSession> tlsSession) {
    this(
        served,
        requestHeaders,
        timeoutMicros,
        false,
        new Origin(loop, prefetch, tlsSession, StreamHandlers.shared(), remoteAddress, null));
  }

  /**
   * A call of {@code served} (null when the call resolved to no method), {@code noMessage} when its
   * first payload carries no message, on the connection {@code origin} describes, as it was when
   * the call arrived.
   */
  ServerContext(
      ServerMethod<?, ?> served,
      Headers requestHeaders,
      long timeoutMicros,
      boolean noMessage,
      Origin origin) {
    this.served = served;
    this.noMessage = noMessage;
    this.origin = origin;
    this.requestHeaders = requestHeaders;
    this.hasDeadline = timeoutMicros != CallHeader.NO_TIMEOUT;
    // From the request's arrival: on a handler executor, the time it waited for a thread counts.
    this.deadlineNanos =
        hasDeadline
            ? ReactiveResponder.requestArrivedNanos()
                + Math.min(timeoutMicros, Long.MAX_VALUE / 4_000) * 1_000
            : 0;
  }

  /** Where a StreamObserver stream handler runs off the loop: the connection's share. */
  java.util.concurrent.Executor streamHandlers() {
    return origin.streamHandlers();
  }

  /** The method called, or null for a call that named none this server serves. */
  public MethodDescriptor<?, ?> method() {
    ServerMethod<?, ?> m = served;
    return m == null ? null : m.descriptor();
  }

  /**
   * The caller's address as the transport saw it when the call was read (on arrival, or when a
   * handler executor's thread took it up; a call on a resumed connection keeps the one it was read
   * with), or null when it does not say.
   */
  public java.net.SocketAddress remoteAddress() {
    return origin.remoteAddress();
  }

  /**
   * The TLS session of the caller's connection, or null when it is not over TLS. Under mutual TLS
   * its {@code getPeerCertificates()} name the caller: what an authorising handler or interceptor
   * reads.
   */
  public javax.net.ssl.SSLSession tlsSession() {
    java.util.function.Supplier<javax.net.ssl.SSLSession> tls = origin.tlsSession();
    return tls == null ? null : tls.get();
  }

  /** The headers the caller sent ({@link Headers#EMPTY} when none). */
  public Headers requestHeaders() {
    return requestHeaders;
  }

  /** Whether the caller set a deadline. */
  public boolean hasDeadline() {
    return hasDeadline;
  }

  /** Time left before the deadline (negative once passed), or null without a deadline. */
  public Duration timeRemaining() {
    return hasDeadline ? Duration.ofNanos(deadlineNanos - System.nanoTime()) : null;
  }

  /** Whether the call's deadline has passed (a call that waited for a thread that long). */
  boolean expired() {
    return hasDeadline && deadlineNanos - System.nanoTime() <= 0;
  }

  /**
   * Whether the call was cancelled: by the caller, by its deadline, or by the connection closing.
   */
  public boolean isCancelled() {
    return cancellation() != null;
  }

  /** CANCELLED or DEADLINE_EXCEEDED once cancelled, else null. */
  public Status cancellation() {
    Object o = extras;
    return o == null ? null : o instanceof Status s ? s : ((Extras) o).cancelledWith;
  }

  /**
   * Runs {@code hook} once if the call is cancelled (at once when it already is), on the thread
   * that cancels it: keep it short and non-blocking.
   */
  public void onCancel(Runnable hook) {
    synchronized (this) {
      Extras x = extras instanceof Status ? null : extras(); // (cancelled: no extras to make)
      if (x != null && x.cancelledWith == null) {
        if (x.onCancel == null) {
          x.onCancel = new ArrayList<>(2);
        }
        x.onCancel.add(hook);
        return;
      }
    }
    hook.run();
  }

  /**
   * Removes a hook given to {@link #onCancel} (the same object), which then does not run; false
   * when it was not registered, or has run. A call that lives long and registers a hook per piece
   * of work (a bidirectional stream, one per message) removes each as the work ends, so that the
   * hooks do not pile up until the call ends.
   */
  public boolean removeOnCancel(Runnable hook) {
    synchronized (this) {
      Extras x = extrasOrNull();
      List<Runnable> hooks = x == null ? null : x.onCancel;
      if (hooks == null) {
        return false;
      }
      for (int i = hooks.size() - 1; i >= 0; i--) {
        if (hooks.get(i) == hook) {
          hooks.remove(i);
          return true;
        }
      }
      return false;
    }
  }

  /**
   * Gives the call {@code value} under {@code key} (replacing any value it had; null removes it),
   * for the handler and the interceptors after this one to read with {@link #get}, on any thread.
   * Returns this context.
   */
  public synchronized <T> ServerContext put(Key<T> key, T value) {
    java.util.Objects.requireNonNull(key, "key");
    Extras x = extrasOrNull();
    if (x == null) {
      if (value == null) {
        return this; // nothing to remove
      }
      x = extras();
    }
    Object[] old = x.values;
    int n = old == null ? 0 : old.length;
    for (int i = 0; i < n; i += 2) {
      if (old[i] == key) {
        Object[] next;
        if (value == null) {
          next = new Object[n - 2];
          System.arraycopy(old, 0, next, 0, i);
          System.arraycopy(old, i + 2, next, i, n - i - 2);
        } else {
          next = old.clone();
          next[i + 1] = value;
        }
        x.values = next.length == 0 ? null : next;
        return this;
      }
    }
    if (value != null) {
      Object[] next = java.util.Arrays.copyOf(old == null ? new Object[0] : old, n + 2);
      next[n] = key;
      next[n + 1] = value;
      x.values = next;
    }
    return this;
  }

  /** The value the call was given under {@code key} ({@link #put}), or null. */
  @SuppressWarnings("unchecked")
  public <T> T get(Key<T> key) {
    Extras x = extrasOrNull();
    Object[] v = x == null ? null : x.values;
    if (v != null) {
      for (int i = 0; i < v.length; i += 2) {
        if (v[i] == key) {
          return (T) v[i + 1];
        }
      }
    }
    return null;
  }

  /** Headers to send with the first response (made on first use). */
  public Headers responseHeaders() {
    Extras x = extras();
    if (x.responseHeaders == null) {
      x.responseHeaders = new Headers();
    }
    return x.responseHeaders;
  }

  /** Trailers to send when the call ends (made on first use). */
  public Headers trailers() {
    Extras x = extras();
    if (x.trailers == null) {
      x.trailers = new Headers();
    }
    return x.trailers;
  }

  /** The response headers, taken once (null when none were set). */
  Headers takeResponseHeaders() {
    Extras x = extrasOrNull();
    if (x == null) {
      return null;
    }
    Headers h = x.responseHeaders;
    x.responseHeaders = null;
    return h == null || h.isEmpty() ? null : h;
  }

  /** The call's extras, made on first use by whichever thread comes first. */
  private Extras extras() {
    Extras x = extrasOrNull();
    if (x == null) {
      synchronized (this) {
        Object o = extras;
        if (o instanceof Extras made) {
          return made;
        }
        x = new Extras();
        x.cancelledWith = (Status) o; // (cancelled before it had extras, or null)
        extras = x;
      }
    }
    return x;
  }

  /** The call's extras, or null when it has none yet. */
  private Extras extrasOrNull() {
    return extras instanceof Extras x ? x : null;
  }

  /**
   * The status a failure ends the call with; a {@link StatusException}'s trailers ({@link
   * Status#asException(Headers)}) are added to those set here, so that they are sent.
   */
  Status failure(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof StatusException e) {
        Headers carried = e.trailers();
        Extras x = extrasOrNull();
        if (!carried.isEmpty() && (x == null || carried != x.trailers)) {
          trailers().putAll(carried);
        }
        return e.status();
      }
    }
    return Status.fromThrowable(t);
  }

  /** The trailers set so far (null when none). */
  Headers trailersOrNull() {
    Extras x = extrasOrNull();
    Headers t = x == null ? null : x.trailers;
    return t == null || t.isEmpty() ? null : t;
  }

  /** The event loop of the call's connection. */
  EventExecutor loop() {
    return origin.loop();
  }

  /** The budget of the call's connection for bytes waiting for readers; null without one. */
  UnreadBudget unreadBudget() {
    return origin.unread();
  }

  /** The method the call resolved to (null for a call refused before that). */
  ServerMethod<?, ?> served() {
    return served;
  }

  /** Whether the call's first payload carries no message (a channel opened without one). */
  boolean noMessage() {
    return noMessage;
  }

  /** The server has interceptors: they get the handler's answer before the runtime does. */
  void markIntercepted() {
    intercepted = true;
  }

  /** Whether {@link #markIntercepted} was called (on the thread that runs the handler). */
  boolean intercepted() {
    return intercepted;
  }

  /** How many requests of a stream the server lets wait. */
  int prefetch() {
    return origin.prefetch();
  }

  long deadlineNanos() {
    return deadlineNanos;
  }

  /** Marks the call cancelled and runs the hooks; false when it already was. */
  boolean cancel(Status why) {
    java.util.Objects.requireNonNull(why, "why");
    List<Runnable> hooks = null;
    synchronized (this) {
      Object o = extras;
      if (o == null) {
        extras = why; // no extras, so no hooks: nothing to allocate
        return true;
      }
      if (o instanceof Status) {
        return false;
      }
      Extras x = (Extras) o;
      if (x.cancelledWith != null) {
        return false;
      }
      x.cancelledWith = why;
      hooks = x.onCancel;
      x.onCancel = null;
    }
    if (hooks != null) {
      for (Runnable hook : hooks) {
        try {
          hook.run();
        } catch (RuntimeException e) {
          System.getLogger(ServerContext.class.getName())
              .log(System.Logger.Level.WARNING, "an onCancel hook of " + method() + " failed", e);
        }
      }
    }
    return true;
  }
}

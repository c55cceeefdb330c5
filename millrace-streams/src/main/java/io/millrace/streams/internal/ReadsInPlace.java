package io.millrace.streams.internal;

/**
 * Marks a Subscriber of payloads that reads each payload within {@code onNext} and keeps nothing of
 * it once {@code onNext} returns (the RPC layer parses each message there). The streams layer then
 * hands it the payloads it can emit at once as {@linkplain io.millrace.streams.Payload#lent lent}
 * views of the engine's receive buffers: no retained view, no copy, nothing to release. A payload
 * that has to wait for demand is still made the subscriber's own, as for any subscriber.
 *
 * <p>A {@link io.millrace.streams.ReactiveHandler} may be marked too: its methods then read the
 * request payload (and a channel's first one) before they return, and keep nothing of it, so a
 * responder without a handler executor lends them the request.
 */
public interface ReadsInPlace {

  /**
   * Whether {@code subscriber} is one, asked of every call's subscriber. Most are an application's
   * (Reactor's {@code LambdaMonoSubscriber}, say), and before JDK 23 an interface check that fails
   * scans all of the class's interfaces every time (the JVM caches only hits): about 10 ns of a
   * Reactor request-response call on JDK 17, where JDK 25 spends none (async-profiler, the call's
   * {@code subscribe} in both). The class last found not to be one is remembered, so that a run of
   * calls from one kind of subscriber costs a compare.
   */
  static boolean check(Object subscriber) {
    Class<?> c = subscriber.getClass();
    if (c == NotInPlace.last) {
      return false;
    }
    if (subscriber instanceof ReadsInPlace) {
      return true;
    }
    NotInPlace.last = c;
    return false;
  }

  /** The remembered class. */
  final class NotInPlace {
    /**
     * Plain: a thread that reads a stale class only makes the full check, and a class either is a
     * ReadsInPlace or is not. It keeps one application class reachable until a call from another
     * class replaces it (after a redeployment, the new deployment's first call).
     */
    static Class<?> last;

    private NotInPlace() {}
  }
}

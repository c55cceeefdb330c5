package io.millrace.rpc;

import io.millrace.streams.internal.UnaryAnswer;

/**
 * The one answer of a unary handler, given through the callbacks of the handler's own library, as
 * the Publisher the runtime subscribes to: the base of the generated bindings' answers (an RxJava
 * {@code Single}, a Mutiny {@code Uni}). Its outcome, signalling and cancel are {@link
 * UnaryAnswer}'s; this adds when an RPC may subscribe to a handler's answer at once ({@link
 * #takesAtOnce}). Where an answer came at once, {@link #settled()} hands it over as a {@code
 * Scalar}, which the runtime takes by a plain call (AnsweredCall: one compare-and-set per call).
 *
 * @param <T> the response type
 */
public abstract class OneAnswer<T> extends UnaryAnswer<T> {

  /** For subclasses. */
  protected OneAnswer() {}

  /**
   * Whether a handler's answer may be subscribed to at once, before the runtime subscribes: on the
   * call's event loop, without a deadline, on a server without interceptors. Then the runtime
   * subscribes right after, on the same thread, and nothing can cancel the call in between, so
   * subscribing early changes nothing a handler or a caller can see. Elsewhere an answer is
   * subscribed when its subscriber subscribes: so that the deadline and the caller's cancel reach
   * work that blocks (a handler executor, a deadline), and so that an interceptor that replaces,
   * defers or repeats the answer decides when its work runs.
   */
  public static boolean takesAtOnce(ServerContext context) {
    return !context.hasDeadline() && !context.intercepted() && context.loop().inEventLoop();
  }
}

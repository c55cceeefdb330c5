package io.millrace.streams.internal;

import io.millrace.streams.Payload;

/**
 * A {@link UnaryAnswer} of a payload, subscribed to its library's answer: what the Reactor, RxJava
 * and Mutiny flavours' request-response answers share. It keeps the library's handle on the work
 * ({@code H}: a Subscription, a Disposable, a UniSubscription) so that the runtime's cancel stops
 * it, and releases a response that will never be signalled.
 *
 * @param <H> the library's handle on the answer's work
 */
public abstract class PayloadAnswer<H> extends UnaryAnswer<Payload> {
  private volatile H upstream;

  /** For subclasses. */
  protected PayloadAnswer() {}

  /**
   * The library gave its handle: kept for a cancel, or stopped at once when the call was cancelled
   * before the handle came. Returns whether the call goes on.
   */
  protected final boolean keep(H handle) {
    upstream = handle;
    if (cancelled()) {
      stop(handle);
      return false;
    }
    return true;
  }

  /** Whether the library gave its handle already. */
  protected final boolean kept() {
    return upstream != null;
  }

  /** Stops the library's work through {@code handle} (cancel, dispose). */
  protected abstract void stop(H handle);

  @Override
  protected final void onCancelled() {
    H handle = upstream;
    if (handle != null) {
      stop(handle);
    }
  }

  @Override
  protected final void discard(Payload response) {
    response.release();
  }
}

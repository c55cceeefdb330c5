package io.millrace.core.internal;

import io.netty.buffer.ByteBuf;

/**
 * What a {@link Transport} reports, in this order of life: {@link #onFrame} for each frame and
 * {@link #onReadComplete} after each batch; {@link #onWritabilityChanged}; {@link #onFrameTooLong};
 * {@link #onInputClosed} when the peer closed its side; {@link #onTransportError}; and last {@link
 * #onTransportClosed}. Called on the transport's executor only.
 *
 * <p>A {@link ConnectionEngine} listens to its transport directly; with resumption a {@link
 * ResumableSession} listens instead, counts positions and forwards to the engine, so that the
 * engine outlives the transports it is carried on.
 */
public interface TransportListener {
  /**
   * One inbound frame without its length prefix, lent until this returns: the transport releases
   * it, or puts back the receive buffer it is a view of (see {@link
   * io.millrace.core.StreamListener} on keeping what it holds).
   */
  void onFrame(ByteBuf frame);

  void onReadComplete();

  void onWritabilityChanged();

  void onFrameTooLong(long length);

  void onInputClosed();

  void onTransportError(Throwable cause);

  void onTransportClosed();
}

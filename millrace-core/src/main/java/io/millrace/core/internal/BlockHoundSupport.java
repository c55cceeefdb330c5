package io.millrace.core.internal;

import reactor.blockhound.BlockHound;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * Tells BlockHound, when an application's tests install it, about the one call on an event loop
 * that it would report as blocking and that is meant: the hand-off's yield after a small drain
 * ({@link CallQueue#yieldCpu}), which lets a producer on the loop's CPU run instead of waking the
 * loop once per call. Found through {@code ServiceLoader} (META-INF/services), as Netty's own
 * integration is; BlockHound is an optional dependency, needed only where it is installed.
 */
public final class BlockHoundSupport implements BlockHoundIntegration {
  @Override
  public void applyTo(BlockHound.Builder builder) {
    builder.allowBlockingCallsInside(CallQueue.class.getName(), "yieldCpu");
  }
}

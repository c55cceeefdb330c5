package io.millrace.rpc;

import org.reactivestreams.Publisher;

/**
 * Runs around every call a client makes: credentials, deadlines by policy, logging, metrics.
 * Interceptors run in the order they were given, the first outermost.
 */
public interface ClientInterceptor {
  /**
   * Called when a call is made: returns the options it goes with (add headers, a timeout), or
   * throws (a {@link StatusException} for a chosen status) to fail the call without sending it.
   */
  default CallOptions onCall(MethodDescriptor<?, ?> method, CallOptions options) {
    return options;
  }

  /**
   * Wraps the call's responses (for a fire-and-forget, its completion); returns them by default.
   */
  default <T> Publisher<T> onResponses(
      MethodDescriptor<?, ?> method, CallOptions options, Publisher<T> responses) {
    return responses;
  }
}

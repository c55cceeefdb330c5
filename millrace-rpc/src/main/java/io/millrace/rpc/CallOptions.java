package io.millrace.rpc;

import io.millrace.core.internal.Signatures;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * What a caller adds to one call: a deadline, request headers, and where response headers and
 * trailers go. Immutable; the {@code with} methods return a copy.
 */
public final class CallOptions {
  static {
    Signatures.resolve(CallOptions.class); // so that C2 may inline calls to their methods
  }

  public static final CallOptions DEFAULT = new CallOptions(null, Headers.EMPTY, null, null);

  private final Duration timeout;
  private final Headers headers;
  private final Consumer<Headers> onHeaders;
  private final Consumer<Headers> onTrailers;

  private CallOptions(
      Duration timeout,
      Headers headers,
      Consumer<Headers> onHeaders,
      Consumer<Headers> onTrailers) {
    this.timeout = timeout;
    this.headers = headers;
    this.onHeaders = onHeaders;
    this.onTrailers = onTrailers;
  }

  /**
   * The call fails with DEADLINE_EXCEEDED when it has not ended {@code timeout} after it starts;
   * the server is told the time left and stops its work then too.
   */
  public CallOptions withTimeout(Duration timeout) {
    if (timeout != null && timeout.isNegative()) {
      throw new IllegalArgumentException("negative timeout: " + timeout);
    }
    return new CallOptions(timeout, headers, onHeaders, onTrailers);
  }

  /** Request headers sent with the call (kept, not copied: do not change them afterwards). */
  public CallOptions withHeaders(Headers headers) {
    return new CallOptions(
        timeout, headers == null ? Headers.EMPTY : headers, onHeaders, onTrailers);
  }

  /** Called with the response headers, if the server sends any, before the first response. */
  public CallOptions onHeaders(Consumer<Headers> onHeaders) {
    return new CallOptions(timeout, headers, onHeaders, onTrailers);
  }

  /**
   * Called with the trailers when the call ends with a status from the server, before the
   * completion or the error is signalled (failed calls also carry them in {@link
   * StatusException#trailers()}).
   */
  public CallOptions onTrailers(Consumer<Headers> onTrailers) {
    return new CallOptions(timeout, headers, onHeaders, onTrailers);
  }

  /** The timeout, or null for none. */
  public Duration timeout() {
    return timeout;
  }

  public Headers headers() {
    return headers;
  }

  Consumer<Headers> headersCallback() {
    return onHeaders;
  }

  Consumer<Headers> trailersCallback() {
    return onTrailers;
  }
}

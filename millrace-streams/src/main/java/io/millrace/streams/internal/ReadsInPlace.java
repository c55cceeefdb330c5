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
public interface ReadsInPlace {}

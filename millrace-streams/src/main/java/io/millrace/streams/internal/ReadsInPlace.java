package io.millrace.streams.internal;

/**
 * Marks a Subscriber of payloads that reads each payload within {@code onNext} and keeps nothing of
 * it once {@code onNext} returns (the RPC layer parses each message there). The streams layer then
 * hands it the payloads it can emit at once as {@linkplain io.millrace.streams.Payload#lent lent}
 * views of the engine's receive buffers: no retained view, no copy, nothing to release. A payload
 * that has to wait for demand is still made the subscriber's own, as for any subscriber.
 */
public interface ReadsInPlace {}

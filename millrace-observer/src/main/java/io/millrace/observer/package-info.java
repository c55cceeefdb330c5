/**
 * Millrace in the gRPC style: {@link io.millrace.observer.StreamObserver} for the four
 * interactions, with grpc-java's flow-control vocabulary ({@code isReady}, an on-ready handler,
 * {@code disableAutoInboundFlowControl} and {@code request(n)}, {@code isCancelled} and an
 * on-cancel handler) over RSocket's credit.
 *
 * <pre>{@code
 * Responder responder = ObserverResponder.of(new ObserverHandler() {
 *   public void requestStream(Payload request, StreamObserver<Payload> responses) {
 *     ServerCallStreamObserver<Payload> out = (ServerCallStreamObserver<Payload>) responses;
 *     Iterator<Row> rows = db.query(request.dataUtf8());
 *     out.setOnReadyHandler(() -> {            // runs whenever the peer wants more
 *       while (out.isReady() && rows.hasNext()) out.onNext(Payload.of(rows.next().toJson()));
 *       if (!rows.hasNext()) out.onCompleted();
 *     });
 *   }
 * });
 *
 * ObserverRequester requester = ObserverRequester.of(connection);
 * requester.requestStream(Payload.of("select ..."), new StreamObserver<>() {
 *   public void onNext(Payload row) { System.out.println(row.dataUtf8()); }
 *   public void onError(Throwable t) { t.printStackTrace(); }
 *   public void onCompleted() { System.out.println("done"); }
 * });
 * }</pre>
 *
 * <p><b>Backpressure is automatic</b>, unlike grpc-java's, where {@code onNext} ignoring {@code
 * isReady} buffers without bound:
 *
 * <ul>
 *   <li>A stream or channel handler that just calls {@code onNext} in a loop is held to the peer's
 *       credit: up to the prefetch values wait, then it waits inside {@code onNext}. That is why,
 *       with no handler executor given, stream and channel handlers run off the event loop, on a
 *       shared executor (a virtual thread each on JDK 21+, else at most 1,024 daemon threads named
 *       {@code millrace-observer-N}, a quarter of them at most for one connection; a handler that
 *       finds none free fails its call with REJECTED). Request-response, fire-and-forget and
 *       metadata push handlers, which send one value at most, run on the loop.
 *   <li>A channel responder that answers from its request observer (on the loop, where it cannot
 *       wait) holds the requester back instead: while more of its answers wait than may, it grants
 *       the requester no credit for the requests it was given.
 *   <li>{@link io.millrace.observer.ObserverResponder#onEventLoop} runs stream and channel handlers
 *       on the loop too, saving a thread hand-off per call: they must then send as {@code isReady}
 *       allows, as above, for a handler on the loop cannot be held back (the peer's credit comes on
 *       the loop it occupies). It may leave about a mebibyte of values waiting (at least the
 *       prefetch's count), which go out as the peer reads; past that its call fails (the server and
 *       the connection go on).
 * </ul>
 *
 * <p><b>Threading.</b> Received values, on-ready and on-cancel handlers come on the connection's
 * event loop, wherever the handler itself ran. An executor in {@link
 * io.millrace.streams.StreamsOptions#handlerExecutor()} runs every handler there. Calls to one
 * observer must not overlap.
 *
 * <p><b>Ends.</b> RSocket's, not gRPC's: a channel responder's {@code onCompleted} ends what it
 * sends, and its request observer goes on hearing the requester's values until the requester
 * completes or the call is cancelled (in gRPC the server's completion ends the whole call). There
 * is no call for a responder to stop them while it goes on sending (grpc-java has none either): one
 * that wants no more ignores them once it has completed, or fails the call with {@code onError}.
 *
 * <p><b>Ownership.</b> Received payloads are heap copies by default: keep them, never release them.
 * Payloads given to {@code onNext} belong to Millrace, released once written or when the call ends
 * first.
 *
 * <p><b>Errors.</b> {@code onError} with a {@link io.millrace.core.StreamErrorException} sends its
 * code and message; other exceptions send APPLICATION_ERROR with a fixed text. Received errors are
 * StreamErrorExceptions carrying the RSocket code; a cancelled call's observer gets CANCELED.
 */
package io.millrace.observer;

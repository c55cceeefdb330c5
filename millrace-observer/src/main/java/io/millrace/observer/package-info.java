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
 * isReady} buffers without bound: a handler that just calls {@code onNext} in a loop is held to the
 * peer's credit. Up to the prefetch values wait; beyond that a handler on a handler executor
 * (virtual threads suit) waits inside {@code onNext}. A handler on the event loop, which must never
 * wait and cannot be held back (the peer's credit comes on the loop it occupies), may leave about a
 * mebibyte of values waiting (at least the prefetch's count), which go out as the peer reads: a
 * loop of a few thousand small values finishes. Past that its call fails (the server and the
 * connection go on). To send more from the loop, follow {@code isReady} and the on-ready handler,
 * as above.
 *
 * <p><b>Threading.</b> Received values, on-ready and on-cancel handlers come on the connection's
 * event loop. Handlers run there unless {@link
 * io.millrace.streams.StreamsOptions#handlerExecutor()} gives an executor. Calls to one observer
 * must not overlap.
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

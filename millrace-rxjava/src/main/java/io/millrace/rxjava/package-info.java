/**
 * Millrace for RxJava 3: {@link io.millrace.rxjava.RxJavaRequester} makes calls as {@code Single},
 * {@code Flowable} and {@code Completable}; {@link io.millrace.rxjava.RxJavaHandler} answers them
 * and {@link io.millrace.rxjava.RxJavaResponder} serves it.
 *
 * <pre>{@code
 * Responder responder = RxJavaResponder.of(new RxJavaHandler() {
 *   public Single<Payload> requestResponse(Payload p) {
 *     return Single.just(Payload.of("hello " + p.dataUtf8()));
 *   }
 * });
 * RxJavaRequester requester = RxJavaRequester.of(connection);
 * requester.requestStream(() -> Payload.of("numbers"))
 *     .rebatchRequests(32)          // REQUEST_N in batches
 *     .retry(3)                     // each retry is a new call
 *     .subscribe(p -> System.out.println(p.dataUtf8()));
 * }</pre>
 *
 * <p><b>Request-response and Single.</b> RSocket lets a responder complete without a payload; a
 * Single must have an item, so such an answer arrives as {@link
 * io.millrace.streams.Payload#empty()}.
 *
 * <p><b>Ownership.</b> Received payloads are heap copies by default: keep them, never release them.
 * Payloads a handler emits or a requester sends belong to Millrace, which releases them once
 * written, also on cancellation and failure. RxJava has no discard hook (Reactor's {@code
 * doOnDiscard}), so a payload on a pooled buffer that the handler's own operators drop before
 * emitting it ({@code filter}, {@code Single.just(p).delay(...)} cancelled) is the handler's to
 * release; heap payloads ({@code Payload.of(byte[])}, {@code Payload.of(String)}) need nothing.
 *
 * <p><b>Threading.</b> Signals come on the connection's event loop and handlers run there unless
 * {@link io.millrace.streams.StreamsOptions#handlerExecutor()} gives an executor; never block in
 * either without one ({@code observeOn}/{@code subscribeOn} move work off the loop). Calls may be
 * made from any thread.
 *
 * <p><b>Backpressure, cancellation, errors.</b> A Flowable's demand becomes REQUEST_N (batched by
 * the prefetch); a handler's Flowable is requested from only as fast as the peer's credit and the
 * socket allow. Disposing sends CANCEL; a peer's CANCEL disposes the handler's Flowable. ERROR
 * frames arrive as {@link io.millrace.core.StreamErrorException}; a handler chooses the code by
 * failing with one.
 */
package io.millrace.rxjava;

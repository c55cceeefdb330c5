/**
 * Millrace for SmallRye Mutiny: {@link io.millrace.mutiny.MutinyRequester} makes calls as {@code
 * Uni} and {@code Multi}; {@link io.millrace.mutiny.MutinyHandler} answers them and {@link
 * io.millrace.mutiny.MutinyResponder} serves it.
 *
 * <pre>{@code
 * Responder responder = MutinyResponder.of(new MutinyHandler() {
 *   public Uni<Payload> requestResponse(Payload p) {
 *     return Uni.createFrom().item(Payload.of("hello " + p.dataUtf8()));
 *   }
 * });
 * MutinyRequester requester = MutinyRequester.of(connection);
 * requester.requestResponse(() -> Payload.of("you"))
 *     .onFailure().retry().atMost(3)      // each retry is a new call
 *     .subscribe().with(p -> System.out.println(p.dataUtf8()));
 * }</pre>
 *
 * <p><b>Request-response and Uni.</b> A responder that completes without a payload gives a null
 * item; a handler's null item sends such an empty answer.
 *
 * <p><b>Ownership.</b> Received payloads are heap copies by default: keep them, never release them.
 * Payloads a handler emits or a requester sends belong to Millrace, which releases them once
 * written, also on cancellation and failure. Mutiny has no discard hook (Reactor's {@code
 * doOnDiscard}), so a payload on a pooled buffer that the handler's own operators drop before
 * emitting it ({@code select().where(...)}, a {@code Uni} cancelled while it holds its item) is the
 * handler's to release; heap payloads ({@code Payload.of(byte[])}, {@code Payload.of(String)}) need
 * nothing.
 *
 * <p><b>Threading.</b> Events come on the connection's event loop and handlers run there unless
 * {@link io.millrace.streams.StreamsOptions#handlerExecutor()} gives an executor; never block in
 * either without one ({@code emitOn}/{@code runSubscriptionOn} move work off the loop). Calls may
 * be made from any thread.
 *
 * <p><b>Backpressure, cancellation, errors.</b> A Multi's demand becomes REQUEST_N (batched by the
 * prefetch); a handler's Multi is requested from only as fast as the peer's credit and the socket
 * allow. Cancelling sends CANCEL; a peer's CANCEL cancels the handler's Multi. ERROR frames arrive
 * as {@link io.millrace.core.StreamErrorException}; a handler chooses the code by failing with one.
 * Mutiny speaks {@code java.util.concurrent.Flow}; the module adapts it with SmallRye's
 * mutiny-zero-flow-adapters.
 */
package io.millrace.mutiny;

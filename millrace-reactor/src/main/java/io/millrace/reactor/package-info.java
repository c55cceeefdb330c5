/**
 * Millrace for Project Reactor: {@link io.millrace.reactor.ReactorRequester} makes calls as {@code
 * Mono} and {@code Flux}, {@link io.millrace.reactor.ReactorHandler} answers them.
 *
 * <pre>{@code
 * MillraceServer server = MillraceServer.builder()
 *     .bindAddress("127.0.0.1", 7878)
 *     .acceptor((setup, connection) -> ReactorResponder.of(new ReactorHandler() {
 *       public Mono<Payload> requestResponse(Payload p) {
 *         return Mono.just(Payload.of("hello " + p.dataUtf8()));
 *       }
 *       public Flux<Payload> requestStream(Payload p) {
 *         return Flux.range(0, 100).map(i -> Payload.of(Integer.toString(i)));
 *       }
 *     }))
 *     .bind();
 *
 * Connection connection = MillraceClient.builder().build().connect("127.0.0.1", 7878).get();
 * ReactorRequester requester = ReactorRequester.of(connection);
 * String hello = requester.requestResponse(Payload.of("you")).map(Payload::dataUtf8).block();
 * requester.requestStream(() -> Payload.of("numbers"))
 *     .limitRate(32)               // REQUEST_N in batches; the server is read at this pace
 *     .retry(3)                    // each retry is a new call: the Supplier makes its payload
 *     .subscribe(p -> System.out.println(p.dataUtf8()));
 * }</pre>
 *
 * <p><b>Ownership.</b> Payloads received (requests in a handler, answers at a requester) are heap
 * copies by default: keep them, pass them on, never release them. The payloads a handler emits and
 * a requester sends belong to Millrace from then on; Millrace releases them once written, also when
 * the call is cancelled or fails. Payloads that Reactor drops before they reach Millrace (a {@code
 * Mono.just} cancelled before it was asked for, an item {@code delayElement} holds when the call is
 * cancelled, one that {@code filter} rejects) never became Millrace's: on the heap ({@code
 * Payload.of(String)}, {@code Payload.of(byte[])}) they need nothing, and a handler or a channel's
 * caller that makes them on pooled buffers adds {@code doOnDiscard(Payload.class,
 * Payload::release)} to its pipeline, Reactor's own way, which reaches through Millrace's
 * subscribers. (Millrace sets no discard hook itself: only the application knows whether a dropped
 * payload is shared, say kept in a cache, and a hook of Millrace's would release received payloads
 * a handler passes through {@code then()}.) With {@link
 * io.millrace.streams.StreamsOptions#zeroCopy()} on, received payloads are views of the receive
 * buffer and their receiver must release them.
 *
 * <p><b>Threading.</b> Subscribers are signalled on the connection's event loop, and handlers run
 * there unless {@link io.millrace.streams.StreamsOptions#handlerExecutor()} gives an executor (a
 * virtual-thread executor suits blocking handlers): never block in either without one ({@code
 * publishOn} or {@code subscribeOn} a Reactor scheduler moves work off the loop). Calls may be made
 * from any thread; from outside the loop they cross through the connection's bounded hand-off.
 *
 * <p><b>Backpressure and cancellation.</b> Downstream demand becomes REQUEST_N (batched by {@link
 * io.millrace.streams.StreamsOptions#prefetch()}); a handler's Flux is requested from only as fast
 * as the peer's credit and the socket allow. Cancelling, {@code take(n)}, {@code timeout} and
 * disposal send CANCEL, and a peer's CANCEL cancels the handler's Flux.
 *
 * <p><b>Context.</b> The Publisher given to {@code requestChannel} is subscribed with the Context
 * of the channel's subscriber, as Reactor's own operators subscribe their inner Publishers, so a
 * {@code contextWrite} after the call (a trace, a security principal) reaches the code that makes
 * the payloads. A Context stays in the process: nothing of it goes on the wire unless the
 * application puts it in a payload's metadata.
 *
 * <p><b>Errors.</b> An ERROR frame arrives as {@link io.millrace.core.StreamErrorException}
 * carrying its code; a handler chooses the code by failing with one.
 */
package io.millrace.reactor;

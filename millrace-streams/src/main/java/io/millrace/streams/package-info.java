/**
 * Millrace in plain Reactive Streams ({@code org.reactivestreams}): the one implementation of the
 * four interactions and metadata push on which the Reactor, RxJava and Mutiny flavours stand, and
 * usable on its own with any Reactive Streams library. {@link
 * io.millrace.streams.ReactiveRequester} makes calls as {@code Publisher}s; {@link
 * io.millrace.streams.ReactiveHandler}, wrapped by {@link io.millrace.streams.ReactiveResponder},
 * answers them.
 *
 * <pre>{@code
 * Responder responder = ReactiveResponder.of(new ReactiveHandler() {
 *   public Publisher<Payload> requestResponse(Payload request) {
 *     String name = request.dataUtf8();
 *     return subscriber -> ...; // any Publisher of at most one payload
 *   }
 * });
 *
 * ReactiveRequester requester = ReactiveRequester.of(connection);
 * Publisher<Payload> answer = requester.requestResponse(Payload.of("you"));
 * Publisher<Payload> items = requester.requestStream(() -> Payload.of("numbers")); // resubscribable
 * }</pre>
 *
 * <p><b>Each Publisher is one call.</b> Nothing is sent until it is subscribed (and, for the
 * interactions that answer, requested from); it takes one subscriber, and a second one gets an
 * error. The {@code Supplier} forms make a payload and a call for each subscriber, for retry and
 * repeat.
 *
 * <p><b>Ownership.</b> A payload given to Millrace (a request, an item of a Publisher Millrace
 * sends, an answer) belongs to Millrace from then on and is released once written, or when the call
 * fails or is cancelled. A request Publisher that is never subscribed keeps its payload: pooled
 * buffers in it are then never released. Received payloads belong to their subscriber and are heap
 * copies by default, so they need no release and pin no receive buffer; with {@link
 * io.millrace.streams.StreamsOptions#zeroCopy()} on they are views of the receive buffer that the
 * subscriber must release. See {@link io.millrace.streams.Payload}.
 *
 * <p><b>Threading.</b> Every signal comes on the connection's event loop; a subscriber may request
 * and cancel from any thread. Handlers run on the event loop unless {@link
 * io.millrace.streams.StreamsOptions#handlerExecutor()} gives an executor (virtual threads suit
 * blocking handlers); never block on the loop. The Publishers a handler returns may emit on any
 * thread. Calls made off the loop cross the connection's bounded hand-off, one wake-up for many.
 *
 * <p><b>Backpressure and cancellation.</b> A subscriber's demand becomes REQUEST_N, batched by
 * {@link io.millrace.streams.StreamsOptions#prefetch()} so that {@code request(1)} loops do not
 * cost a frame each; a handler's Publisher is requested from only as fast as the peer's credit and
 * the socket allow. {@code cancel()} sends CANCEL, and a peer's CANCEL cancels the handler's
 * subscription. An ERROR frame arrives as {@code onError} with a {@link
 * io.millrace.core.StreamErrorException} carrying its code; a handler chooses the code by failing
 * with one; an exception thrown by handler code becomes APPLICATION_ERROR with a fixed text (its
 * message only with {@code ConnectionConfig.errorMessagesFromHandlers}).
 */
package io.millrace.streams;

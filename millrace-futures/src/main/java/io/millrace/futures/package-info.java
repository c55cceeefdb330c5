/**
 * Millrace with CompletableFuture and blocking calls: {@link io.millrace.futures.FutureRequester}
 * (request-response and fire-and-forget as futures), {@link io.millrace.futures.BlockingRequester}
 * (the same as blocking calls, and streams as a {@link io.millrace.futures.BlockingStream}), and
 * {@link io.millrace.futures.FutureHandler} to answer request-response with a CompletionStage.
 *
 * <pre>{@code
 * BlockingRequester requester = BlockingRequester.of(connection);
 * Payload answer = requester.requestResponse(Payload.of("hi"), Duration.ofSeconds(2));
 * try (BlockingStream numbers = requester.requestStream(Payload.of("numbers"))) {
 *   numbers.forEachRemaining(p -> System.out.println(p.dataUtf8()));
 * }
 *
 * // A handler that blocks, one virtual thread per request:
 * Responder responder = FutureResponder.of(
 *     p -> CompletableFuture.completedFuture(Payload.of(db.lookup(p.dataUtf8()))),
 *     StreamsOptions.builder().handlerExecutor(Executors.newVirtualThreadPerTaskExecutor()).build());
 * }</pre>
 *
 * <p><b>Virtual threads.</b> Blocking calls wait by parking (CompletableFuture, LockSupport) and
 * hold no monitor, so a waiting virtual thread unmounts: VirtualThreadsTest runs a thousand
 * concurrent callers on JDK 25 and finds no pinning once classes are loaded. A blocking call made
 * on the connection's event loop fails at once instead of deadlocking. When the connection's
 * hand-off to its event loop is full, a blocking request-response or fire-and-forget waits for room
 * and sends then, instead of failing.
 *
 * <p><b>Ownership.</b> Answers are heap copies by default: keep them, never release them. What is
 * sent belongs to Millrace, a handler's answer once its stage takes it: a handler's
 * CompletableFuture cancelled by a peer's CANCEL refuses a later {@code complete(answer)} (it
 * returns false), and a pooled answer it refused is the handler's to release. A {@link
 * io.millrace.futures.BlockingStream} closed early releases what it had not handed out.
 *
 * <p><b>Threading.</b> Futures complete on the event loop: their non-async dependents run there, so
 * use the {@code *Async} variants for blocking follow-ups. {@code FutureHandler} methods run on the
 * loop unless a handler executor is given.
 *
 * <p><b>Cancellation and errors.</b> Cancelling a future, a timeout, an interrupt or closing a
 * stream sends CANCEL; a peer's CANCEL cancels a handler's CompletableFuture. Errors are {@link
 * io.millrace.core.StreamErrorException}s carrying the RSocket code.
 */
package io.millrace.futures;

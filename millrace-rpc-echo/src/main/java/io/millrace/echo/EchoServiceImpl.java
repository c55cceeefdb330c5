package io.millrace.echo;

import com.google.protobuf.ByteString;
import io.millrace.echo.v1.CountRequest;
import io.millrace.echo.v1.EchoReply;
import io.millrace.echo.v1.EchoRequest;
import io.millrace.echo.v1.EchoServiceReactor;
import io.millrace.rpc.ServerContext;
import io.millrace.rpc.Status;
import java.util.concurrent.atomic.AtomicLong;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * {@code millrace.echo.v1.EchoService}, with fixed semantics for interop checks and demos:
 *
 * <ul>
 *   <li>Echo: the payload back (sequence 0); {@code fail_with_status} other than 0 fails the call
 *       with that status and {@code fail_message}.
 *   <li>Count: {@code n} replies with sequence 0 to n-1 and an empty payload; a negative n is
 *       INVALID_ARGUMENT.
 *   <li>Collect: the payloads concatenated in order, sequence the number of requests; more than
 *       {@link #MAX_COLLECTED_BYTES} in all is RESOURCE_EXHAUSTED.
 *   <li>Chat: each request echoed as it arrives, sequence 0, 1, ...; a request with {@code
 *       fail_with_status} fails the call there.
 *   <li>Notify (fire-and-forget): counted, see {@link #notified()}.
 * </ul>
 */
public final class EchoServiceImpl implements EchoServiceReactor.Service {
  /** What Collect accepts in all before it fails. */
  public static final int MAX_COLLECTED_BYTES = 16 * 1024 * 1024;

  private final AtomicLong notified = new AtomicLong();

  /** Notify calls received so far. */
  public long notified() {
    return notified.get();
  }

  @Override
  public Mono<EchoReply> echo(EchoRequest request, ServerContext context) {
    if (request.getFailWithStatus() != 0) {
      return Mono.error(failure(request));
    }
    return Mono.just(EchoReply.newBuilder().setPayload(request.getPayload()).build());
  }

  @Override
  public Flux<EchoReply> count(CountRequest request, ServerContext context) {
    if (request.getN() < 0) {
      return Flux.error(
          Status.of(Status.Code.INVALID_ARGUMENT)
              .withMessage("n must be at least 0: " + request.getN())
              .asException());
    }
    return Flux.range(0, request.getN()).map(i -> EchoReply.newBuilder().setSequence(i).build());
  }

  @Override
  public Mono<EchoReply> collect(Flux<EchoRequest> requests, ServerContext context) {
    return requests
        .reduce(
            new Collected(),
            (c, r) -> {
              if (c.payload.size() + (long) r.getPayload().size() > MAX_COLLECTED_BYTES) {
                throw Status.of(Status.Code.RESOURCE_EXHAUSTED)
                    .withMessage("Collect takes at most " + MAX_COLLECTED_BYTES + " bytes")
                    .asException();
              }
              c.payload = c.payload.concat(r.getPayload());
              c.count++;
              return c;
            })
        .map(c -> EchoReply.newBuilder().setPayload(c.payload).setSequence(c.count).build());
  }

  @Override
  public Flux<EchoReply> chat(Flux<EchoRequest> requests, ServerContext context) {
    return requests
        .index()
        .map(
            t -> {
              if (t.getT2().getFailWithStatus() != 0) {
                throw failure(t.getT2());
              }
              return EchoReply.newBuilder()
                  .setPayload(t.getT2().getPayload())
                  .setSequence(t.getT1())
                  .build();
            });
  }

  @Override
  public Mono<Void> notify(EchoRequest request, ServerContext context) {
    notified.incrementAndGet();
    return Mono.empty();
  }

  private static RuntimeException failure(EchoRequest request) {
    return Status.of(Status.Code.of(request.getFailWithStatus()))
        .withMessage(request.getFailMessage().isEmpty() ? null : request.getFailMessage())
        .asException();
  }

  /** Collect's running result (one per call, touched by one thread at a time). */
  private static final class Collected {
    ByteString payload = ByteString.EMPTY;
    long count;
  }
}

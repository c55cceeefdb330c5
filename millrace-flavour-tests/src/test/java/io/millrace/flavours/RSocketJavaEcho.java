package io.millrace.flavours;

import static io.millrace.flavours.Behaviour.*;

import io.rsocket.Payload;
import io.rsocket.RSocket;
import io.rsocket.exceptions.CustomRSocketException;
import io.rsocket.util.DefaultPayload;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/** {@link Behaviour} as an rsocket-java 1.1 user writes it. */
final class RSocketJavaEcho implements RSocket {
  private final Probe probe;

  RSocketJavaEcho(Probe probe) {
    this.probe = probe;
  }

  @Override
  public Mono<Void> fireAndForget(Payload payload) {
    probe.fireAndForgets.add(payload.getDataUtf8());
    payload.release();
    return Mono.empty();
  }

  @Override
  public Mono<Void> metadataPush(Payload payload) {
    probe.metadataPushes.add(payload.getMetadataUtf8());
    payload.release();
    return Mono.empty();
  }

  @Override
  public Mono<Payload> requestResponse(Payload payload) {
    String data = payload.getDataUtf8();
    String metadata = payload.hasMetadata() ? payload.getMetadataUtf8() : null;
    payload.release();
    switch (data) {
      case FAIL:
        return Mono.error(new IllegalArgumentException("failed"));
      case THROW:
        throw new IllegalStateException("thrown");
      case CODE:
        return Mono.error(new CustomRSocketException(USER_CODE, "custom"));
      case EMPTY:
        return Mono.empty();
      case NEVER:
        return Mono.<Payload>never().doOnCancel(probe::answerCancelled);
      default:
        return Mono.just(DefaultPayload.create(data, metadata));
    }
  }

  @Override
  public Flux<Payload> requestStream(Payload payload) {
    String request = payload.getDataUtf8();
    payload.release();
    if (request.equals(THROW)) {
      throw new IllegalStateException("thrown");
    }
    if (request.equals(FAIL)) {
      return Flux.range(0, 3)
          .map(i -> DefaultPayload.create(item(i, 0)))
          .concatWith(Flux.error(new IllegalArgumentException("failed")));
    }
    long n = count(request);
    int size = size(request);
    return Flux.<Payload, Long>generate(
            () -> 0L,
            (i, sink) -> {
              sink.next(DefaultPayload.create(item(i, size)));
              return i + 1;
            })
        .take(n, true)
        // Off the loop only when asked: publishOn's queue would drop pooled payloads on cancel.
        .transform(f -> request.startsWith(ASYNC) ? f.publishOn(Schedulers.parallel()) : f)
        .doOnNext(p -> probe.emitted())
        .doOnCancel(probe::cancelled);
  }

  @Override
  public Flux<Payload> requestChannel(Publisher<Payload> payloads) {
    return Flux.from(payloads)
        .switchOnFirst(
            (first, all) -> {
              String data = first.hasValue() ? first.get().getDataUtf8() : "";
              return data.startsWith(TAKE)
                  ? all.take(1 + Integer.parseInt(data.substring(TAKE.length())))
                  : all;
            })
        .map(
            p -> {
              String data = p.getDataUtf8();
              String metadata = p.hasMetadata() ? p.getMetadataUtf8() : null;
              p.release();
              if (data.equals(FAIL)) {
                throw new IllegalArgumentException("failed");
              }
              if (data.equals(THROW)) {
                throw new IllegalStateException("a handler's bug");
              }
              return DefaultPayload.create(data, metadata);
            })
        .doOnCancel(probe::cancelled);
  }
}

package io.millrace.streams;

import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The test responder: request-response echoes; request-stream sends as many items as the request's
 * data says ("inf": until cancelled), numbered "0", "1", ...; a channel echoes the first payload
 * then every later one; "fail" as data fails with APPLICATION_ERROR, "throw" throws.
 */
final class Echo implements ReactiveHandler {
  @Override
  public Publisher<Payload> requestResponse(Payload payload) {
    String data = payload.dataUtf8();
    if (data.equals("throw")) {
      throw new IllegalStateException("thrown by the handler");
    }
    if (data.equals("fail")) {
      return Mono.error(new IllegalArgumentException("failed by the handler"));
    }
    if (data.equals("empty")) {
      return Mono.empty();
    }
    return Mono.just(Payload.of(payload.metadataUtf8(), data));
  }

  @Override
  public Publisher<Payload> requestStream(Payload payload) {
    String data = payload.dataUtf8();
    if (data.equals("fail")) {
      return Flux.concat(
          Flux.range(0, 3).map(i -> Payload.of(Integer.toString(i))),
          Flux.error(new IllegalArgumentException("failed after 3")));
    }
    long n = data.equals("inf") ? Long.MAX_VALUE : Long.parseLong(data);
    return Flux.<Payload, Long>generate(
            () -> 0L,
            (i, sink) -> {
              sink.next(Payload.of(Long.toString(i)));
              return i + 1;
            })
        .take(n, true);
  }

  @Override
  public Publisher<Payload> requestChannel(Payload first, Publisher<Payload> inbound) {
    return Flux.concat(Mono.just(first), Flux.from(inbound));
  }
}

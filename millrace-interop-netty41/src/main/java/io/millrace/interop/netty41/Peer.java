package io.millrace.interop.netty41;

import io.netty.buffer.ByteBuf;
import io.rsocket.Payload;
import io.rsocket.RSocket;
import io.rsocket.core.RSocketConnector;
import io.rsocket.core.RSocketServer;
import io.rsocket.exceptions.ApplicationErrorException;
import io.rsocket.transport.netty.client.TcpClientTransport;
import io.rsocket.transport.netty.server.CloseableChannel;
import io.rsocket.transport.netty.server.TcpServerTransport;
import io.rsocket.util.DefaultPayload;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.reactivestreams.Publisher;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * rsocket-java 1.1.5 on the stack it ships with, as a program for Millrace's interop tests.
 *
 * <ul>
 *   <li>{@code server}: an echo server (request-response echoes data and metadata, data {@code
 *       error:MSG} fails with MSG; request-stream sends N payloads "0".."N-1" with the request's
 *       metadata; request-channel echoes every payload), fragmenting at 64 bytes. Prints {@code
 *       PORT n}, then one line per fire-and-forget ({@code FNF data|metadata}) and per channel its
 *       requester cancelled ({@code CHANNEL_CANCELLED}). Runs until its standard input closes.
 *   <li>{@code client PORT}: runs scenarios against a Millrace echo server and prints {@code OK
 *       name} or {@code FAIL name: why} for each, then {@code DONE failures}; exits 0 when all
 *       passed.
 * </ul>
 *
 * Both print {@code NETTY version} first, so the test can check which stack it really ran.
 */
public final class Peer {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);
  private static final PrintStream OUT = System.out;

  private Peer() {}

  public static void main(String[] args) throws Exception {
    OUT.println("NETTY " + io.netty.util.Version.identify().get("netty-common").artifactVersion());
    OUT.flush();
    if (args.length >= 1 && args[0].equals("server")) {
      server();
    } else if (args.length >= 2 && args[0].equals("client")) {
      System.exit(client(Integer.parseInt(args[1])));
    } else {
      System.err.println("usage: Peer server | Peer client PORT");
      System.exit(2);
    }
  }

  private static synchronized void print(String line) {
    OUT.println(line);
    OUT.flush();
  }

  private static String utf8(ByteBuf buf) {
    return buf.toString(StandardCharsets.UTF_8);
  }

  private static Payload payload(String data, String metadata) {
    return DefaultPayload.create(
        data.getBytes(StandardCharsets.UTF_8),
        metadata == null ? null : metadata.getBytes(StandardCharsets.UTF_8));
  }

  /** Data and metadata of a payload ("data" or "data|metadata"), releasing it. */
  private static String text(Payload p) {
    try {
      return utf8(p.sliceData()) + (p.hasMetadata() ? "|" + utf8(p.sliceMetadata()) : "");
    } finally {
      p.release();
    }
  }

  // ---------------------------------------------------------------- server

  private static void server() throws Exception {
    CloseableChannel channel =
        RSocketServer.create((setup, socket) -> Mono.just(new Echo()))
            .fragment(64)
            .bind(TcpServerTransport.create("127.0.0.1", 0))
            .block(TIMEOUT);
    print("PORT " + channel.address().getPort());
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    while (in.readLine() != null) {
      // runs until the test closes our input
    }
    channel.dispose();
  }

  private static final class Echo implements RSocket {
    @Override
    public Mono<Void> fireAndForget(Payload payload) {
      print("FNF " + text(payload));
      return Mono.empty();
    }

    @Override
    public Mono<Payload> requestResponse(Payload payload) {
      String data = payload.getDataUtf8();
      String metadata = payload.hasMetadata() ? payload.getMetadataUtf8() : null;
      payload.release();
      if (data.startsWith("error:")) {
        return Mono.error(new ApplicationErrorException(data.substring(6)));
      }
      return Mono.just(payload(data, metadata));
    }

    @Override
    public Flux<Payload> requestStream(Payload payload) {
      int count = Integer.parseInt(payload.getDataUtf8());
      String metadata = payload.hasMetadata() ? payload.getMetadataUtf8() : null;
      payload.release();
      return Flux.range(0, count).map(i -> payload(Integer.toString(i), metadata));
    }

    @Override
    public Flux<Payload> requestChannel(Publisher<Payload> payloads) {
      return Flux.from(payloads).map(Echo::echo).doOnCancel(() -> print("CHANNEL_CANCELLED"));
    }

    private static Payload echo(Payload p) {
      try {
        return payload(p.getDataUtf8(), p.hasMetadata() ? p.getMetadataUtf8() : null);
      } finally {
        p.release();
      }
    }
  }

  // ---------------------------------------------------------------- client

  private interface Scenario {
    void run(RSocket rsocket) throws Exception;
  }

  private static int client(int port) {
    RSocket rsocket =
        RSocketConnector.create()
            .fragment(64)
            .connect(TcpClientTransport.create("127.0.0.1", port))
            .block(TIMEOUT);
    List<String> failures = new ArrayList<>();
    scenario(failures, rsocket, "request-response", Peer::requestResponse);
    scenario(failures, rsocket, "request-response-error", Peer::requestResponseError);
    scenario(failures, rsocket, "request-stream-limit-rate", Peer::requestStream);
    scenario(failures, rsocket, "request-channel", Peer::requestChannel);
    scenario(failures, rsocket, "fire-and-forget", Peer::fireAndForget);
    scenario(failures, rsocket, "fragmented-100k", Peer::fragmented);
    scenario(failures, rsocket, "cancelled-channels-5000", Peer::cancelledChannels);
    rsocket.dispose();
    print("DONE " + failures.size());
    return failures.isEmpty() ? 0 : 1;
  }

  private static void scenario(List<String> failures, RSocket rsocket, String name, Scenario s) {
    try {
      s.run(rsocket);
      print("OK " + name);
    } catch (Throwable e) {
      failures.add(name);
      print("FAIL " + name + ": " + e);
    }
  }

  private static void check(boolean condition, String what) {
    if (!condition) {
      throw new AssertionError(what);
    }
  }

  private static void requestResponse(RSocket rsocket) {
    String echoed = text(rsocket.requestResponse(payload("hello", "meta")).block(TIMEOUT));
    check(echoed.equals("hello|meta"), "echo was " + echoed);
  }

  private static void requestResponseError(RSocket rsocket) {
    try {
      rsocket.requestResponse(payload("error:boom", null)).block(TIMEOUT);
      throw new AssertionError("no error");
    } catch (ApplicationErrorException e) {
      check(e.getMessage().equals("boom"), "message was " + e.getMessage());
    }
  }

  private static void requestStream(RSocket rsocket) {
    List<String> items =
        rsocket
            .requestStream(payload("100", "m"))
            .limitRate(7)
            .map(Peer::text)
            .collectList()
            .block(TIMEOUT);
    List<String> expected = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      expected.add(i + "|m");
    }
    check(expected.equals(items), "items were " + items);
  }

  private static void requestChannel(RSocket rsocket) {
    List<String> items =
        rsocket
            .requestChannel(
                Flux.just(payload("first", "fm"), payload("a", null), payload("b", null)))
            .map(Peer::text)
            .collectList()
            .block(TIMEOUT);
    check(List.of("first|fm", "a", "b").equals(items), "items were " + items);
  }

  private static void fireAndForget(RSocket rsocket) {
    rsocket.fireAndForget(payload("fnf-data", "fnf-meta")).block(TIMEOUT);
    // The test checks that the Millrace server received it.
  }

  private static void fragmented(RSocket rsocket) {
    String big =
        java.util.stream.IntStream.range(0, 20_000)
            .mapToObj(Integer::toString)
            .collect(Collectors.joining(","))
            .substring(0, 100_000);
    String echoed = text(rsocket.requestResponse(payload(big, "big-meta")).block(TIMEOUT));
    check(echoed.equals(big + "|big-meta"), "the 100 KB echo differs");
  }

  private static void cancelledChannels(RSocket rsocket) throws Exception {
    AtomicInteger firsts = new AtomicInteger();
    for (int i = 0; i < 5000; i++) {
      Sinks.Many<Payload> outbound = Sinks.many().unicast().onBackpressureBuffer();
      CountDownLatch first = new CountDownLatch(1);
      Disposable subscription =
          rsocket
              .requestChannel(outbound.asFlux())
              .subscribe(
                  p -> {
                    p.release();
                    firsts.incrementAndGet();
                    first.countDown();
                  });
      outbound.tryEmitNext(payload("c" + i, null)).orThrow();
      check(first.await(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS), "no echo on channel " + i);
      subscription.dispose();
    }
    // 5,000 is beyond the 4,096 streams a half-closed channel would have pinned.
    String after = text(rsocket.requestResponse(payload("after", null)).block(TIMEOUT));
    check(after.equals("after"), "request after the cancels answered " + after);
  }
}

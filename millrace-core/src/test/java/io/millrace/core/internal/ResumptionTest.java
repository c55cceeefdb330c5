package io.millrace.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.core.CloseReason;
import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.ConnectionListener;
import io.millrace.core.Responder;
import io.millrace.core.Resumption;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.frame.ErrorCode;
import io.millrace.testing.SequencedPayload;
import io.netty.buffer.ByteBuf;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * Resumption end to end without sockets: a client and a server engine on in-memory connections that
 * break (every in-flight frame lost), for every interaction, with payloads from 1 byte to 64 KiB
 * cut into fragments. Every item carries its sequence number in its content; the receiver checks
 * size and content against the next expected one, so a loss, a repeat or a reordering fails at
 * once. The test loop's tracking allocator fails the test if a buffer is left unreleased.
 */
class ResumptionTest {
  static ConnectionConfig config(long storeBytes) {
    return ConnectionConfig.builder()
        .fragmentSize(4096)
        .maxFrameLength(1 << 20)
        .resumption(Resumption.builder().maxStoreBytes(storeBytes).build())
        .build();
  }

  static ByteBuf item(io.netty.buffer.ByteBufAllocator alloc, int seq) {
    return SequencedPayload.item(alloc, seq);
  }

  static String check(ByteBuf data, int seq) {
    return SequencedPayload.check(data, seq);
  }

  /** Sends {@code total} items as credit and writability allow, then completes. */
  static final class Producer implements StreamListener {
    final int total;
    int next;
    boolean done;

    Producer(int total) {
      this.total = total;
    }

    void pump(Stream s) {
      while (!done && next < total && s.credit() > 0 && s.isReady()) {
        s.next(null, item(s.connection().alloc(), next++));
      }
      if (!done && next == total && !s.isOutboundDone()) {
        done = true;
        s.complete();
      }
    }

    @Override
    public void onReady(Stream stream) {
      pump(stream);
    }
  }

  /** Receives items, checking each is the next one, granting one credit per item. */
  static final class Checker implements StreamListener {
    int received;
    boolean autoRequest = true;
    final List<String> problems = new ArrayList<>();
    boolean completed;
    String error;

    @Override
    public void onNext(Stream stream, ByteBuf metadata, ByteBuf data) {
      String problem = check(data, received++);
      if (problem != null) {
        problems.add(problem);
      }
      if (autoRequest) {
        stream.request(1);
      }
    }

    @Override
    public void onComplete(Stream stream) {
      completed = true;
    }

    @Override
    public void onError(Stream stream, int errorCode, String message) {
      error = errorCode + " " + message;
    }
  }

  static final Responder STREAMING =
      new Responder() {
        @Override
        public StreamListener requestStream(Stream stream, ByteBuf metadata, ByteBuf data) {
          Producer p = new Producer(data.readInt());
          p.pump(stream);
          return p;
        }
      };

  private static void until(ResumeHarness h, BooleanSupplier done) {
    for (int i = 0; i < 20_000 && !h.loop.call(done::getAsBoolean); i++) {
      h.settle(1, 100);
    }
    assertThat(h.loop.call(done::getAsBoolean)).as("finished in time").isTrue();
  }

  private static ByteBuf count(ResumeHarness h, int n) {
    return h.loop.alloc.buffer(4).writeInt(n);
  }

  @Test
  void requestStream_survivesAHundredCuts_withNothingLostRepeatedOrReordered() {
    try (ResumeHarness h =
        new ResumeHarness(
            config(1 << 20), config(1 << 20), STREAMING, Responder.REJECT_ALL, 64 << 20)) {
      List<String> events = new ArrayList<>();
      h.loop.run(() -> h.client.addListener(recorder(events)));
      h.cutAfterFrames = 40; // every new connection breaks after 40 frames
      Checker checker = new Checker();
      int total = 1_500;
      h.loop.run(() -> h.client.requestStream(null, count(h, total), 8, checker));
      h.loop.run(() -> h.current.cut());
      until(h, () -> checker.completed || checker.error != null);
      assertThat(checker.problems).isEmpty();
      assertThat(checker.error).isNull();
      assertThat(checker.received).isEqualTo(total);
      assertThat(h.connections).isGreaterThan(100);
      assertThat(events).contains("disconnected", "resumed").doesNotContain("closed");
      h.cutAfterFrames = 0;
      h.cut();
      h.settle(5, 100);
      assertPositionsAgree(h);
      assertThat(h.loop.call(() -> h.client.activeStreams())).isZero();
      assertThat(h.loop.call(() -> h.server.activeStreams())).isZero();
    }
  }

  @Test
  void requestResponse_and_fireAndForget_eachHappenExactlyOnceAcrossCuts() {
    AtomicInteger fnf = new AtomicInteger();
    AtomicInteger served = new AtomicInteger();
    Responder responder =
        new Responder() {
          @Override
          public void fireAndForget(Connection connection, ByteBuf metadata, ByteBuf data) {
            assertThat(data.readInt()).isEqualTo(fnf.getAndIncrement());
          }

          @Override
          public StreamListener requestResponse(Stream stream, ByteBuf metadata, ByteBuf data) {
            served.incrementAndGet();
            stream.nextAndComplete(null, data.retainedSlice());
            return null;
          }
        };
    try (ResumeHarness h =
        new ResumeHarness(
            config(1 << 20), config(1 << 20), responder, Responder.REJECT_ALL, 64 << 20)) {
      h.cutAfterFrames = 25;
      h.loop.run(() -> h.current.cut());
      int calls = 2_000;
      int[] answers = new int[calls];
      List<String> problems = new ArrayList<>();
      h.loop.run(
          () -> {
            for (int i = 0; i < calls; i++) {
              int n = i;
              h.client.fireAndForget(null, count(h, i));
              h.client.requestResponse(
                  null,
                  count(h, i),
                  new StreamListener() {
                    @Override
                    public void onNext(Stream stream, ByteBuf metadata, ByteBuf data) {
                      if (data.getInt(data.readerIndex()) != n) {
                        problems.add("call " + n + " answered with " + data.getInt(0));
                      }
                      answers[n]++;
                    }

                    @Override
                    public void onError(Stream stream, int errorCode, String message) {
                      problems.add("call " + n + " failed: " + message);
                    }
                  });
            }
          });
      until(h, () -> served.get() == calls && fnf.get() == calls && sum(answers) == calls);
      h.settle(3, 100);
      assertThat(problems).isEmpty();
      assertThat(answers).containsOnly(1);
      assertThat(served).hasValue(calls);
      assertThat(fnf).hasValue(calls);
      assertThat(h.connections).isGreaterThan(100);
    }
  }

  @Test
  void requestChannel_carriesBothDirectionsAcrossCuts() {
    Responder echoCount =
        new Responder() {
          @Override
          public StreamListener requestChannel(
              Stream stream, ByteBuf metadata, ByteBuf data, boolean inboundComplete) {
            Producer producer = new Producer(data.readInt());
            Checker inbound = new Checker();
            stream.request(8);
            producer.pump(stream);
            return new StreamListener() {
              @Override
              public void onNext(Stream s, ByteBuf m, ByteBuf d) {
                inbound.onNext(s, m, d);
                if (!inbound.problems.isEmpty()) {
                  s.error(ErrorCode.APPLICATION_ERROR, inbound.problems.get(0));
                }
              }

              @Override
              public void onComplete(Stream s) {
                if (inbound.received != 300) {
                  s.error(ErrorCode.APPLICATION_ERROR, "server got " + inbound.received);
                }
              }

              @Override
              public void onReady(Stream s) {
                producer.pump(s);
              }
            };
          }
        };
    try (ResumeHarness h =
        new ResumeHarness(
            config(1 << 20), config(1 << 20), echoCount, Responder.REJECT_ALL, 64 << 20)) {
      h.cutAfterFrames = 45;
      Checker checker = new Checker();
      Producer upstream = new Producer(300);
      h.loop.run(
          () -> {
            Stream s =
                h.client.requestChannel(
                    null,
                    count(h, 300),
                    8,
                    false,
                    new StreamListener() {
                      @Override
                      public void onNext(Stream st, ByteBuf m, ByteBuf d) {
                        checker.onNext(st, m, d);
                      }

                      @Override
                      public void onComplete(Stream st) {
                        checker.onComplete(st);
                      }

                      @Override
                      public void onError(Stream st, int code, String message) {
                        checker.onError(st, code, message);
                      }

                      @Override
                      public void onReady(Stream st) {
                        upstream.pump(st);
                      }
                    });
            upstream.pump(s);
          });
      h.loop.run(() -> h.current.cut());
      until(h, () -> checker.completed && upstream.done || checker.error != null);
      assertThat(checker.error).isNull();
      assertThat(checker.problems).isEmpty();
      assertThat(checker.received).isEqualTo(300);
      // How many frames share a connection depends on how the test thread's clock steps interleave
      // with the loop (27 to over 50 connections seen): what matters is many cuts, all survived.
      assertThat(h.connections).isGreaterThan(10);
    }
  }

  @Test
  void aFullStore_holdsTheProducerBack_untilThePeerConfirms() {
    try (ResumeHarness h =
        new ResumeHarness(
            config(256 << 10), config(256 << 10), STREAMING, Responder.REJECT_ALL, 64 << 20)) {
      Checker checker = new Checker();
      // The client stops reading: the server's frames stay unconfirmed.
      h.loop.run(() -> h.current.clientEnd.setReading(false));
      h.loop.run(() -> h.client.requestStream(null, count(h, 400), 1_000, checker));
      h.settle(3, 10);
      ResumableSession serverSession = h.server.session;
      long held = h.loop.call(() -> serverSession.store().bytes());
      assertThat(held).isGreaterThanOrEqualTo(256 << 10).isLessThan((256 << 10) + 70_000);
      assertThat(h.loop.call(() -> serverSession.isWritable())).isFalse();
      h.loop.run(() -> h.current.clientEnd.setReading(true));
      until(h, () -> checker.completed);
      assertThat(checker.problems).isEmpty();
      assertThat(checker.received).isEqualTo(400);
    }
  }

  @Test
  void anUnknownSession_isRejected_andTheClientIsToldAndDoesNotRetry() {
    try (ResumeHarness h =
        new ResumeHarness(
            config(1 << 20), config(1 << 20), STREAMING, Responder.REJECT_ALL, 64 << 20)) {
      List<String> events = new ArrayList<>();
      h.loop.run(() -> h.client.addListener(recorder(events)));
      Checker checker = new Checker();
      checker.autoRequest = false; // one item, then the stream waits
      h.loop.run(() -> h.client.requestStream(null, count(h, 1_000_000), 1, checker));
      h.settle(2, 10);
      // The server forgets the session (as a restarted server would).
      h.loop.run(() -> h.server.dispose());
      h.settle(2, 10);
      int connectionsBefore = h.connections;
      h.settle(20, 100);
      assertThat(events).contains("resume rejected", "closed RESUME_REJECTED");
      assertThat(checker.error).startsWith(ErrorCode.REJECTED_RESUME + " ");
      assertThat(h.connections).isLessThanOrEqualTo(connectionsBefore + 1);
      assertThat(h.client.isOpen()).isFalse();
    }
  }

  @Test
  void aDetachedServerSession_expires_andItsStreamsFail() {
    ConnectionConfig server =
        ConnectionConfig.builder()
            .resumption(Resumption.builder().sessionTimeout(Duration.ofSeconds(3)).build())
            .build();
    List<String> serverEvents = new ArrayList<>();
    try (ResumeHarness h =
        new ResumeHarness(config(1 << 20), server, STREAMING, Responder.REJECT_ALL, 64 << 20)) {
      h.loop.run(() -> h.server.addListener(recorder(serverEvents)));
      Checker checker = new Checker();
      checker.autoRequest = false; // one item, then the stream waits
      h.loop.run(() -> h.client.requestStream(null, count(h, 1_000_000), 1, checker));
      h.settle(2, 10);
      h.refuseReconnects = true;
      h.cut();
      h.settle(10, 500);
      assertThat(serverEvents).contains("disconnected", "closed SESSION_EXPIRED");
      assertThat(h.sessions.size()).isZero();
      assertThat(h.sessions.heldBytes()).isZero();
      h.refuseReconnects = false;
      h.settle(40, 500);
      assertThat(checker.error).startsWith(ErrorCode.REJECTED_RESUME + " ");
    }
  }

  private static ScriptedTransport resumableServer(TestLoop loop, ResumeSessions sessions) {
    return resumableServer(loop, sessions, new ScriptedTransport(loop));
  }

  private static ScriptedTransport resumableServer(
      TestLoop loop, ResumeSessions sessions, ScriptedTransport t) {
    t.engine =
        ConnectionEngine.resumableServer(
            t,
            ConnectionConfig.builder().resumption(Resumption.defaults()).build(),
            (setup, connection) -> STREAMING,
            null,
            null,
            sessions,
            t.timers);
    loop.run(() -> t.engine.start(null, null));
    return t;
  }

  private static ByteBuf setupWithToken(String token) {
    ByteBuf t = Frames.utf8(token);
    try {
      return io.millrace.frame.SetupFrame.encode(
          Frames.ALLOC, 0, false, 60_000, 120_000, t, "text/plain", "text/plain", null, null);
    } finally {
      t.release();
    }
  }

  @Test
  void aTokenInUse_orUsedBefore_isRefusedForSetup() {
    try (TestLoop loop = new TestLoop()) {
      ResumeSessions sessions = new ResumeSessions(Resumption.defaults(), 1 << 20);
      ScriptedTransport first = resumableServer(loop, sessions);
      first.inject(setupWithToken("token-1"));
      assertThat(first.take()).isEmpty();
      assertThat(sessions.size()).isEqualTo(1);

      ScriptedTransport second = resumableServer(loop, sessions);
      second.inject(setupWithToken("token-1"));
      assertThat(second.take())
          .singleElement()
          .satisfies(f -> assertThat(f.errorCode).isEqualTo(ErrorCode.REJECTED_SETUP));

      loop.run(() -> first.engine.dispose());
      assertThat(sessions.size()).isZero();
      ScriptedTransport third = resumableServer(loop, sessions);
      third.inject(setupWithToken("token-1"));
      assertThat(third.take())
          .singleElement()
          .satisfies(f -> assertThat(f.errorCode).isEqualTo(ErrorCode.REJECTED_SETUP));
      loop.run(() -> second.engine.dispose());
      loop.run(() -> third.engine.dispose());
    }
  }

  /** A TLS session that shows {@code certificate} as the peer's (null: none). */
  private static javax.net.ssl.SSLSession tls(java.security.cert.Certificate certificate) {
    return (javax.net.ssl.SSLSession)
        java.lang.reflect.Proxy.newProxyInstance(
            ResumptionTest.class.getClassLoader(),
            new Class<?>[] {javax.net.ssl.SSLSession.class},
            (proxy, method, args) -> {
              if (method.getName().equals("getPeerCertificates")) {
                if (certificate == null) {
                  throw new javax.net.ssl.SSLPeerUnverifiedException("no certificate");
                }
                return new java.security.cert.Certificate[] {certificate};
              }
              throw new UnsupportedOperationException(method.getName());
            });
  }

  private static java.security.cert.Certificate certificate(String name) throws Exception {
    try (java.io.InputStream in =
        java.nio.file.Files.newInputStream(io.millrace.testing.TestCertificates.path(name))) {
      return java.security.cert.CertificateFactory.getInstance("X.509").generateCertificate(in);
    }
  }

  private static ScriptedTransport resumeOver(
      TestLoop loop, ResumeSessions sessions, javax.net.ssl.SSLSession tls, String token) {
    ScriptedTransport t = new ScriptedTransport(loop);
    t.tlsSession = tls;
    resumableServer(loop, sessions, t);
    ByteBuf id = Frames.utf8(token);
    t.inject(io.millrace.frame.ResumeFrame.encode(Frames.ALLOC, 0, id, 0, 0));
    id.release();
    return t;
  }

  /**
   * A session its client set up with a certificate (mutual TLS) resumes only for that identity: a
   * RESUME with its token but another client's certificate, or none, is refused, and neither takes
   * the session nor ends it or its connection.
   */
  @Test
  void aResumeWithAnotherClientCertificate_isRefused_andTheSessionStaysItsClients()
      throws Exception {
    java.security.cert.Certificate client = certificate("client.pem");
    try (TestLoop loop = new TestLoop()) {
      ResumeSessions sessions = new ResumeSessions(Resumption.defaults(), 1 << 20);
      ScriptedTransport first = new ScriptedTransport(loop);
      first.tlsSession = tls(client);
      resumableServer(loop, sessions, first);
      first.inject(setupWithToken("token-3"));
      assertThat(first.take()).isEmpty();

      for (java.security.cert.Certificate wrong :
          java.util.Arrays.asList(certificate("other-client.pem"), null)) {
        ScriptedTransport thief = resumeOver(loop, sessions, tls(wrong), "token-3");
        assertThat(thief.take())
            .singleElement()
            .satisfies(f -> assertThat(f.errorCode).isEqualTo(ErrorCode.REJECTED_RESUME));
        assertThat(first.closed).as("the client's own connection").isFalse();
        assertThat(sessions.size()).isEqualTo(1);
      }

      ScriptedTransport same = resumeOver(loop, sessions, tls(client), "token-3");
      assertThat(same.take())
          .anySatisfy(f -> assertThat(f.type).isEqualTo(io.millrace.frame.FrameType.RESUME_OK));
      loop.run(() -> same.engine.dispose());
    }
  }

  /**
   * Which identity may resume: any, for a session set up without a certificate; for one set up with
   * a certificate, one for the same subject from the same issuer (a renewed certificate).
   */
  @Test
  void samePeer_isTheSameSubjectFromTheSameIssuer() throws Exception {
    java.security.cert.Certificate server = certificate("server.pem");
    assertThat(ResumableSession.samePeer(null, tls(server))).isTrue();
    assertThat(ResumableSession.samePeer(tls(null), null)).isTrue();
    assertThat(ResumableSession.samePeer(tls(server), tls(certificate("server-renewed.pem"))))
        .as("renewed: same subject, same issuer")
        .isTrue();
    assertThat(ResumableSession.samePeer(tls(server), tls(certificate("client.pem")))).isFalse();
    assertThat(ResumableSession.samePeer(tls(server), null)).isFalse();
  }

  @Test
  void resumeOnAnEstablishedSession_isAConnectionError() {
    try (TestLoop loop = new TestLoop()) {
      ResumeSessions sessions = new ResumeSessions(Resumption.defaults(), 1 << 20);
      ScriptedTransport t = resumableServer(loop, sessions);
      ByteBuf token = Frames.utf8("token-2");
      t.inject(
          setupWithToken("token-2"),
          io.millrace.frame.ResumeFrame.encode(Frames.ALLOC, 0, token, 0, 0));
      token.release();
      assertThat(t.take())
          .singleElement()
          .satisfies(f -> assertThat(f.errorCode).isEqualTo(ErrorCode.CONNECTION_ERROR));
      assertThat(t.closed).isTrue();
    }
  }

  @Test
  void leases_areGrantedAfreshAfterAResume_withWhatWasLeft() {
    ConnectionConfig server =
        ConnectionConfig.builder()
            .resumption(Resumption.defaults())
            .leaseIssuer(io.millrace.core.LeaseIssuer.fixed(60_000, 100))
            .build();
    ConnectionConfig client =
        ConnectionConfig.builder().lease(true).resumption(Resumption.defaults()).build();
    try (ResumeHarness h =
        new ResumeHarness(client, server, STREAMING, Responder.REJECT_ALL, 64 << 20)) {
      List<String> grants = new ArrayList<>();
      h.loop.run(
          () ->
              h.client.addListener(
                  new ConnectionListener() {
                    @Override
                    public void onLeaseGranted(Connection c, int ttl, int requests) {
                      grants.add(ttl + "/" + requests);
                    }
                  }));
      h.refuseReconnects = true; // the client stays away a while: the lease runs on meanwhile
      h.cut();
      h.settle(5, 100);
      h.refuseReconnects = false;
      h.settle(60, 100); // past the longest backoff (5 s), whatever the jitter drew
      // What was left of the grant, never more: fewer milliseconds, the same requests.
      assertThat(grants).hasSize(1);
      String[] grant = grants.get(0).split("/");
      assertThat(Integer.parseInt(grant[0])).isBetween(50_000, 59_500);
      assertThat(grant[1]).isEqualTo("100");
      assertThat(h.loop.call(() -> h.client.availability())).isEqualTo(1.0);
    }
  }

  @Test
  void connectionsThatBreakRightAway_doNotKeepTheClientTryingPastItsSessionTimeout() {
    ConnectionConfig client =
        ConnectionConfig.builder()
            .resumption(Resumption.builder().sessionTimeout(Duration.ofSeconds(2)).build())
            .build();
    try (ResumeHarness h =
        new ResumeHarness(client, config(1 << 20), STREAMING, Responder.REJECT_ALL, 64 << 20)) {
      List<String> events = new ArrayList<>();
      h.loop.run(() -> h.client.addListener(recorder(events)));
      Checker checker = new Checker();
      checker.autoRequest = false;
      h.loop.run(() -> h.client.requestStream(null, count(h, 1_000_000), 1, checker));
      h.settle(2, 10);
      h.cutAfterFrames = 1; // every new connection breaks once its first frame (RESUME) is through
      h.cut();
      h.settle(40, 100);
      assertThat(events).contains("closed SESSION_EXPIRED");
      assertThat(checker.error).isNotNull();
      assertThat(h.connections).isGreaterThan(3);
    }
  }

  @Test
  void theServerWideBudget_holdsSendersBack_andExpiresTheSessionDetachedLongest() {
    try (TestLoop loop = new TestLoop()) {
      ResumeSessions sessions = new ResumeSessions(Resumption.defaults(), 200_000);
      // Session A: a stream the peer never confirms, until the budget is used up; then A's
      // connection breaks and A waits for its client.
      ScriptedTransport a = resumableServer(loop, sessions);
      List<String> aEvents = new ArrayList<>();
      a.inject(setupWithToken("token-a"), Frames.requestStream(1, 1_000, "1000"));
      loop.run(() -> a.engine.addListener(recorder(aEvents)));
      a.take();
      long held = sessions.heldBytes();
      assertThat(held).isGreaterThanOrEqualTo(200_000).isLessThan(200_000 + 70_000);
      assertThat(loop.call(() -> a.engine.session.isWritable())).isFalse();
      a.peerClosesInput();
      assertThat(aEvents).containsExactly("disconnected");

      // Session B needs room: A, detached longest, is expired for it.
      ScriptedTransport b = resumableServer(loop, sessions);
      b.inject(setupWithToken("token-b"), Frames.requestStream(1, 1_000, "1000"));
      b.advance(Duration.ofMillis(50));
      assertThat(aEvents).contains("closed SESSION_EXPIRED");
      assertThat(sessions.size()).isEqualTo(1);
      assertThat(sessions.heldBytes()).isLessThan(200_000 + 70_000);
      assertThat(b.take()).isNotEmpty();
      loop.run(() -> b.engine.dispose());
      assertThat(sessions.heldBytes()).isZero();
    }
  }

  private static int sum(int[] values) {
    int s = 0;
    for (int v : values) {
      s += v;
    }
    return s;
  }

  private static void assertPositionsAgree(ResumeHarness h) {
    ResumableSession client = h.client.session;
    ResumableSession server = h.server.session;
    h.loop.run(
        () -> {
          assertThat(server.receivedPosition()).isEqualTo(client.store().end());
          assertThat(client.receivedPosition()).isEqualTo(server.store().end());
        });
  }

  static ConnectionListener recorder(List<String> events) {
    return new ConnectionListener() {
      @Override
      public void onDisconnected(Connection connection, String reason) {
        events.add("disconnected");
      }

      @Override
      public void onResumed(Connection connection) {
        events.add("resumed");
      }

      @Override
      public void onResumeRejected(Connection connection, String message) {
        events.add("resume rejected");
      }

      @Override
      public void onClosed(Connection connection, CloseReason reason) {
        events.add("closed " + reason.kind());
      }
    };
  }
}

package io.millrace.echo;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.millrace.echo.v1.CountRequest;
import io.millrace.echo.v1.EchoReply;
import io.millrace.echo.v1.EchoRequest;
import io.millrace.echo.v1.EchoServiceObserver;
import io.millrace.observer.ClientCallStreamObserver;
import io.millrace.observer.ClientResponseObserver;
import io.millrace.observer.ServerCallStreamObserver;
import io.millrace.observer.StreamObserver;
import io.millrace.rpc.CallOptions;
import io.millrace.rpc.RpcOverTcp;
import io.millrace.rpc.RpcServer;
import io.millrace.rpc.ServerContext;
import io.millrace.rpc.Status;
import io.millrace.rpc.StatusException;
import io.millrace.streams.StreamsOptions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The StreamObserver flavour the plugin generates, both sides over TCP: each interaction, statuses,
 * cancellation and deadlines reaching the handler, and flow control both ways (isReady and the
 * on-ready handler, manual request(n), a producer off the loop held to the reader's pace).
 */
class ObserverFlavourTest {
  private static final int PREFETCH = 16;

  private final ExecutorService handlers = Executors.newCachedThreadPool();
  private final AtomicLong notified = new AtomicLong();
  private final AtomicLong sent = new AtomicLong();
  private final CountDownLatch serverSawCancel = new CountDownLatch(1);
  private final AtomicReference<Thread> producer = new AtomicReference<>();
  private final CountDownLatch producerEnded = new CountDownLatch(1);
  private RpcOverTcp tcp;
  private EchoServiceObserver.Client echo;

  /**
   * EchoService in the observer style. Count follows isReady and the on-ready handler on the event
   * loop, except for n above 1,000,000: then it sends in a plain loop from a handler thread, which
   * the flow control must hold back.
   */
  private final EchoServiceObserver.Service observerEcho =
      new EchoServiceObserver.Service() {
        @Override
        public void echo(
            EchoRequest request,
            ServerContext context,
            ServerCallStreamObserver<EchoReply> responses) {
          if (request.getFailWithStatus() != 0) {
            responses.onError(
                Status.of(Status.Code.of(request.getFailWithStatus()))
                    .withMessage(request.getFailMessage())
                    .asException());
            return;
          }
          if (request.getFailMessage().equals("throw")) {
            throw new IllegalStateException("a handler's bug");
          }
          responses.onNext(EchoReply.newBuilder().setPayload(request.getPayload()).build());
          responses.onCompleted();
        }

        @Override
        public void count(
            CountRequest request,
            ServerContext context,
            ServerCallStreamObserver<EchoReply> responses) {
          responses.setOnCancelHandler(serverSawCancel::countDown);
          int n = request.getN();
          if (n > 1_000_000) {
            handlers.execute(
                () -> {
                  producer.set(Thread.currentThread());
                  for (int i = 0; i < n && !responses.isCancelled(); i++) {
                    responses.onNext(EchoReply.newBuilder().setSequence(i).build());
                    sent.incrementAndGet();
                  }
                  producerEnded.countDown();
                });
            return;
          }
          int[] next = {0};
          responses.setOnReadyHandler(
              () -> {
                while (responses.isReady() && next[0] < n) {
                  responses.onNext(EchoReply.newBuilder().setSequence(next[0]++).build());
                  sent.incrementAndGet();
                }
                if (next[0] == n && n >= 0) {
                  next[0] = -1;
                  responses.onCompleted();
                }
              });
          // n == 0 never becomes "ready to send more": end now.
          if (n == 0) {
            responses.onCompleted();
          }
        }

        @Override
        public StreamObserver<EchoRequest> collect(
            ServerContext context, ServerCallStreamObserver<EchoReply> responses) {
          return new StreamObserver<>() {
            private ByteString all = ByteString.EMPTY;
            private long n;

            @Override
            public void onNext(EchoRequest value) {
              all = all.concat(value.getPayload());
              n++;
            }

            @Override
            public void onError(Throwable t) {}

            @Override
            public void onCompleted() {
              responses.onNext(EchoReply.newBuilder().setPayload(all).setSequence(n).build());
              responses.onCompleted();
            }
          };
        }

        @Override
        public StreamObserver<EchoRequest> chat(
            ServerContext context, ServerCallStreamObserver<EchoReply> responses) {
          return new StreamObserver<>() {
            private long i;

            @Override
            public void onNext(EchoRequest value) {
              responses.onNext(
                  EchoReply.newBuilder().setPayload(value.getPayload()).setSequence(i++).build());
            }

            @Override
            public void onError(Throwable t) {}

            @Override
            public void onCompleted() {
              responses.onCompleted();
            }
          };
        }

        @Override
        public void notify(EchoRequest request, ServerContext context) {
          notified.incrementAndGet();
        }
      };

  private void serve(EchoServiceObserver.Service service) throws Exception {
    tcp =
        RpcOverTcp.serve(
            RpcServer.builder()
                .service(EchoServiceObserver.bind(service))
                .streamsOptions(StreamsOptions.builder().prefetch(PREFETCH).build())
                .build());
    echo = new EchoServiceObserver.Client(tcp.client());
  }

  @AfterEach
  void stop() {
    if (tcp != null) {
      tcp.close();
    }
    handlers.shutdownNow();
  }

  private static EchoRequest request(String payload) {
    return EchoRequest.newBuilder().setPayload(ByteString.copyFromUtf8(payload)).build();
  }

  /** Collects what an observer receives. */
  /**
   * The credit an observer client opens a server-streaming call with, seen by a plain RSocket
   * responder: unbounded when it reads automatically (each reply goes to the observer on the loop
   * as it is read); when it took flow control in hand in beforeStart, what it asked for, one more
   * for the trailer and the streams layer's prefetch. Flow control cannot be taken in hand later.
   */
  @Test
  void aClientReadingAutomaticallyOpensWithUnboundedCredit() throws Exception {
    java.util.concurrent.BlockingQueue<Long> credits =
        new java.util.concurrent.LinkedBlockingQueue<>();
    tcp =
        RpcOverTcp.serve(
            (setup, connection) ->
                new io.millrace.core.Responder() {
                  @Override
                  public io.millrace.core.StreamListener requestStream(
                      io.millrace.core.Stream stream,
                      io.netty.buffer.ByteBuf metadata,
                      io.netty.buffer.ByteBuf data) {
                    credits.add(stream.credit());
                    stream.error(io.millrace.frame.ErrorCode.APPLICATION_ERROR, "recorded");
                    return null;
                  }
                });
    echo = new EchoServiceObserver.Client(tcp.client());
    CountRequest request = CountRequest.newBuilder().setN(10).build();

    Recorder<EchoReply> automatic = new Recorder<>();
    echo.count(request, automatic);
    assertThat(credits.poll(10, TimeUnit.SECONDS)).isEqualTo(Long.MAX_VALUE);
    automatic.failure();

    AtomicReference<ClientCallStreamObserver<CountRequest>> started = new AtomicReference<>();
    Manual manual =
        new Manual() {
          @Override
          public void beforeStart(ClientCallStreamObserver<CountRequest> call) {
            call.disableAutoInboundFlowControl();
            call.request(3);
          }
        };
    echo.count(request, manual);
    assertThat(credits.poll(10, TimeUnit.SECONDS))
        .isEqualTo(3 + 1 + io.millrace.streams.internal.InboundPublisher.FIRST_PREFETCH);
    manual.failure();

    Manual late =
        new Manual() {
          @Override
          public void beforeStart(ClientCallStreamObserver<CountRequest> call) {
            started.set(call);
          }
        };
    echo.count(request, late);
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> started.get().disableAutoInboundFlowControl())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("beforeStart");
    assertThat(credits.poll(10, TimeUnit.SECONDS)).isEqualTo(Long.MAX_VALUE);
    late.failure();
  }

  /** A recorder that is handed its call first. */
  private abstract static class Manual extends Recorder<EchoReply>
      implements ClientResponseObserver<CountRequest, EchoReply> {}

  private static class Recorder<T> implements StreamObserver<T> {
    final List<T> values = new CopyOnWriteArrayList<>();
    final CompletableFuture<List<T>> done = new CompletableFuture<>();

    @Override
    public void onNext(T value) {
      values.add(value);
    }

    @Override
    public void onError(Throwable t) {
      done.completeExceptionally(t);
    }

    @Override
    public void onCompleted() {
      done.complete(values);
    }

    List<T> await() throws Exception {
      return done.get(10, TimeUnit.SECONDS);
    }

    StatusException failure() throws Exception {
      try {
        done.get(10, TimeUnit.SECONDS);
      } catch (java.util.concurrent.ExecutionException e) {
        assertThat(e.getCause()).isInstanceOf(StatusException.class);
        return (StatusException) e.getCause();
      }
      throw new AssertionError("the call completed: " + values);
    }
  }

  @Test
  void unary_answersAndFailsWithTheHandlersStatus() throws Exception {
    serve(observerEcho);
    Recorder<EchoReply> ok = new Recorder<>();
    echo.echo(request("hello"), ok);
    assertThat(ok.await()).extracting(r -> r.getPayload().toStringUtf8()).containsExactly("hello");

    Recorder<EchoReply> failed = new Recorder<>();
    echo.echo(
        EchoRequest.newBuilder().setFailWithStatus(5).setFailMessage("no such thing").build(),
        failed);
    StatusException e = failed.failure();
    assertThat(e.status().code()).isEqualTo(Status.Code.NOT_FOUND);
    assertThat(e.status().message()).isEqualTo("no such thing");

    Recorder<EchoReply> threw = new Recorder<>();
    echo.echo(EchoRequest.newBuilder().setFailMessage("throw").build(), threw);
    assertThat(threw.failure().status().code()).isEqualTo(Status.Code.UNKNOWN);
  }

  /**
   * A unary call's observer hears its answer on the connection's event loop; one that throws from
   * onNext gets its own exception in onError and nothing more; a ClientResponseObserver is handed
   * the call first and may cancel it, and then hears CANCELLED.
   */
  @Test
  void unary_observersThatThrowOrCancel_hearWhatTheyCaused() throws Exception {
    serve(observerEcho);
    AtomicReference<String> thread = new AtomicReference<>();
    Recorder<EchoReply> onLoop =
        new Recorder<>() {
          @Override
          public void onNext(EchoReply value) {
            thread.set(Thread.currentThread().getName());
            super.onNext(value);
          }
        };
    echo.echo(request("where"), onLoop);
    assertThat(onLoop.await()).hasSize(1);
    assertThat(thread.get()).isNotEqualTo(Thread.currentThread().getName());

    IllegalStateException bug = new IllegalStateException("the observer's bug");
    List<String> heard = new CopyOnWriteArrayList<>();
    CompletableFuture<Throwable> failed = new CompletableFuture<>();
    echo.echo(
        request("x"),
        new StreamObserver<>() {
          @Override
          public void onNext(EchoReply value) {
            heard.add("next");
            throw bug;
          }

          @Override
          public void onError(Throwable t) {
            heard.add("error");
            failed.complete(t);
          }

          @Override
          public void onCompleted() {
            heard.add("completed");
          }
        });
    assertThat(failed.get(10, TimeUnit.SECONDS)).isSameAs(bug);
    Thread.sleep(100); // nothing more arrives
    assertThat(heard).containsExactly("next", "error");

    Recorder<EchoReply> cancelled = new Recorder<>();
    echo.echo(
        request("never"),
        new ClientResponseObserver<EchoRequest, EchoReply>() {
          @Override
          public void beforeStart(ClientCallStreamObserver<EchoRequest> call) {
            call.cancel("changed my mind", null);
          }

          @Override
          public void onNext(EchoReply value) {
            cancelled.onNext(value);
          }

          @Override
          public void onError(Throwable t) {
            cancelled.onError(t);
          }

          @Override
          public void onCompleted() {
            cancelled.onCompleted();
          }
        });
    assertThat(cancelled.failure().status().code()).isEqualTo(Status.Code.CANCELLED);
    assertThat(cancelled.values).isEmpty();
  }

  /**
   * A unary handler that blocks on a handler executor runs while the call is live: the deadline's
   * expiry reaches it as it runs (isCancelled, its on-cancel handler, onNext throwing CANCELLED),
   * and the caller gets DEADLINE_EXCEEDED on time, not when the handler returns.
   */
  @Test
  void unary_blockingHandlerOnAnExecutor_seesTheDeadlineWhileItRuns() throws Exception {
    CountDownLatch onCancel = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicReference<String> seen = new AtomicReference<>();
    EchoServiceObserver.Service blocking =
        new DelegatingService(observerEcho) {
          @Override
          public void echo(
              EchoRequest request,
              ServerContext context,
              ServerCallStreamObserver<EchoReply> responses) {
            responses.setOnCancelHandler(onCancel::countDown);
            try {
              release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
            String s = "cancelled=" + responses.isCancelled() + " context=" + context.isCancelled();
            responses.onNext(EchoReply.newBuilder().setPayload(request.getPayload()).build());
            seen.set(s + " onNext dropped");
          }
        };
    tcp =
        RpcOverTcp.serve(
            RpcServer.builder()
                .service(EchoServiceObserver.bind(blocking))
                .streamsOptions(StreamsOptions.builder().handlerExecutor(handlers).build())
                .build());
    echo = new EchoServiceObserver.Client(tcp.client());
    // A handler still waiting for a thread at its deadline is not run at all: a thread ready, and a
    // deadline that leaves a loaded machine time to start the handler.
    handlers.submit(() -> {}).get(10, TimeUnit.SECONDS);
    Recorder<EchoReply> r = new Recorder<>();
    long start = System.nanoTime();
    echo.echo(request("slow"), r, CallOptions.DEFAULT.withTimeout(Duration.ofMillis(1_000)));
    assertThat(r.failure().status().code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(5_000);
    assertThat(onCancel.await(10, TimeUnit.SECONDS))
        .as("the on-cancel handler ran while the handler was blocked")
        .isTrue();
    release.countDown();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (seen.get() == null && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertThat(seen.get()).isEqualTo("cancelled=true context=true onNext dropped");
  }

  @Test
  void serverStream_followsIsReadyAndManualRequests() throws Exception {
    serve(observerEcho);
    int n = 10_000;
    CompletableFuture<List<Long>> done = new CompletableFuture<>();
    List<Long> got = new CopyOnWriteArrayList<>();
    echo.count(
        CountRequest.newBuilder().setN(n).build(),
        new ClientResponseObserver<CountRequest, EchoReply>() {
          private ClientCallStreamObserver<CountRequest> call;
          private int inBatch;

          @Override
          public void beforeStart(ClientCallStreamObserver<CountRequest> call) {
            this.call = call;
            call.disableAutoInboundFlowControl();
            call.request(5);
          }

          @Override
          public void onNext(EchoReply value) {
            got.add(value.getSequence());
            if (++inBatch == 5) {
              inBatch = 0;
              call.request(5);
            }
          }

          @Override
          public void onError(Throwable t) {
            done.completeExceptionally(t);
          }

          @Override
          public void onCompleted() {
            done.complete(got);
          }
        });
    List<Long> sequences = done.get(20, TimeUnit.SECONDS);
    assertThat(sequences).hasSize(n);
    for (int i = 0; i < n; i++) {
      assertThat(sequences.get(i)).isEqualTo(i);
    }
    assertThat(sent.get()).isEqualTo(n);
  }

  @Test
  void serverStream_emptyStreamCompletes() throws Exception {
    serve(observerEcho);
    Recorder<EchoReply> r = new Recorder<>();
    echo.count(CountRequest.newBuilder().setN(0).build(), r);
    assertThat(r.await()).isEmpty();
  }

  @Test
  void producerOffTheLoop_isHeldToTheReadersPace_andCancelStopsIt() throws Exception {
    serve(observerEcho);
    heldAtTheReadersPace_thenCancelled();
  }

  /**
   * Calls Count for two billion replies, asking for ten and never more: the server's producer (in
   * {@link #producer}, counting into {@link #sent}) must end up waiting, having sent no more than
   * the client's window (the stream's credit: StreamsOptions' default prefetch of 256, topped up by
   * the 10 the application took), what the server lets wait (PREFETCH) and the one it holds; the
   * cancel then reaches it and it ends.
   */
  private void heldAtTheReadersPace_thenCancelled() throws Exception {
    AtomicInteger received = new AtomicInteger();
    AtomicReference<ClientCallStreamObserver<CountRequest>> callRef = new AtomicReference<>();
    Recorder<EchoReply> end = new Recorder<>();
    echo.count(
        CountRequest.newBuilder().setN(2_000_000_000).build(),
        new ClientResponseObserver<CountRequest, EchoReply>() {
          @Override
          public void beforeStart(ClientCallStreamObserver<CountRequest> call) {
            callRef.set(call);
            call.disableAutoInboundFlowControl();
            call.request(10); // and never more
          }

          @Override
          public void onNext(EchoReply value) {
            received.incrementAndGet();
          }

          @Override
          public void onError(Throwable t) {
            end.onError(t);
          }

          @Override
          public void onCompleted() {
            end.onCompleted();
          }
        });
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    long before = -1;
    int quiet =
        0; // samples in a row the producer waited and sent nothing: five, for a slow machine
    while (System.nanoTime() < deadline) {
      Thread t = producer.get();
      long now = sent.get();
      quiet =
          t != null && t.getState() == Thread.State.TIMED_WAITING && now == before ? quiet + 1 : 0;
      if (quiet == 5) {
        break;
      }
      before = now;
      Thread.sleep(100);
    }
    long stalledAt = sent.get();
    assertThat(stalledAt).isEqualTo(before).isLessThanOrEqualTo(256 + 10 + PREFETCH + 1);
    Thread.sleep(200);
    assertThat(sent.get()).isEqualTo(stalledAt);
    while (received.get() < 10 && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertThat(received.get()).isEqualTo(10);

    callRef.get().cancel("enough", null);
    assertThat(end.failure().status().code()).isEqualTo(Status.Code.CANCELLED);
    assertThat(serverSawCancel.await(10, TimeUnit.SECONDS)).isTrue();
    // Woken by the cancel, and ends (onNext returns quietly: an on-cancel handler is set).
    assertThat(producerEnded.await(10, TimeUnit.SECONDS)).isTrue();
  }

  /**
   * grpc-java's plain loop, in the handler itself, on a server given no executor: the handler runs
   * on the shared stream-handler executor, not the event loop, and is held to the reader's credit.
   */
  @Test
  void aHandlerSendingInAPlainLoop_runsOffTheLoop_andIsHeldToTheReadersPace() throws Exception {
    AtomicReference<Boolean> onLoop = new AtomicReference<>();
    serve(
        new DelegatingService(observerEcho) {
          @Override
          public void count(
              CountRequest request,
              ServerContext context,
              ServerCallStreamObserver<EchoReply> responses) {
            producer.set(Thread.currentThread());
            onLoop.set(io.netty.util.internal.ThreadExecutorMap.currentExecutor() != null);
            responses.setOnCancelHandler(serverSawCancel::countDown);
            for (int i = 0; i < request.getN() && !responses.isCancelled(); i++) {
              responses.onNext(EchoReply.newBuilder().setSequence(i).build());
              sent.incrementAndGet();
            }
            producerEnded.countDown();
          }
        });
    heldAtTheReadersPace_thenCancelled();
    assertThat(onLoop.get()).as("the handler ran on an event loop").isFalse();
  }

  /**
   * A bidirectional handler runs off the loop (the server has no executor), and its request
   * observer still hears every request on the event loop, the first included (RPC's requests emit
   * the first as they are asked, on the asking thread: the handler's, before they were subscribed
   * on the loop).
   */
  @Test
  void bidi_handlerOffTheLoop_requestObserverOnTheLoop() throws Exception {
    AtomicReference<Boolean> handlerOnLoop = new AtomicReference<>();
    List<Boolean> requestsOnLoop = new CopyOnWriteArrayList<>();
    serve(
        new DelegatingService(observerEcho) {
          @Override
          public StreamObserver<EchoRequest> chat(
              ServerContext context, ServerCallStreamObserver<EchoReply> responses) {
            handlerOnLoop.set(io.netty.util.internal.ThreadExecutorMap.currentExecutor() != null);
            return new StreamObserver<>() {
              @Override
              public void onNext(EchoRequest value) {
                requestsOnLoop.add(
                    io.netty.util.internal.ThreadExecutorMap.currentExecutor() != null);
                responses.onNext(EchoReply.newBuilder().setPayload(value.getPayload()).build());
              }

              @Override
              public void onError(Throwable t) {}

              @Override
              public void onCompleted() {
                responses.onCompleted();
              }
            };
          }
        });
    EchoServiceObserver.Client routed =
        new EchoServiceObserver.Client(
            io.millrace.rpc.RpcClient.routing(tcp.connect(RpcServer.ROUTED_METADATA_MIME_TYPE)));
    for (int call = 0; call < 40; call++) {
      requestsOnLoop.clear();
      Recorder<EchoReply> r = new Recorder<>();
      // Native callers and routing callers (whose first request the server holds apart).
      ClientCallStreamObserver<EchoRequest> requests = (call % 2 == 0 ? echo : routed).chat(r);
      requests.onNext(request("a"));
      requests.onNext(request("b"));
      requests.onCompleted();
      assertThat(r.await()).hasSize(2);
      assertThat(handlerOnLoop.get()).isFalse();
      assertThat(requestsOnLoop).as("call %d", call).containsExactly(true, true);
    }
  }

  /** An Error thrown by a handler run off the loop fails its call; it is not left open. */
  @Test
  void serverStream_anErrorThrownOffTheLoop_failsTheCall() throws Exception {
    serve(
        new DelegatingService(observerEcho) {
          @Override
          public void count(
              CountRequest request,
              ServerContext context,
              ServerCallStreamObserver<EchoReply> responses) {
            responses.onNext(EchoReply.newBuilder().setSequence(0).build());
            throw new AssertionError("a handler's broken invariant");
          }
        });
    Recorder<EchoReply> r = new Recorder<>();
    echo.count(CountRequest.newBuilder().setN(5).build(), r);
    assertThat(r.failure().status().code()).isEqualTo(Status.Code.UNKNOWN);
    assertThat(r.values).hasSize(1);
  }

  @Test
  void deadline_failsTheCallerAndCancelsTheHandler() throws Exception {
    serve(
        new DelegatingService(observerEcho) {
          @Override
          public void count(
              CountRequest request,
              ServerContext context,
              ServerCallStreamObserver<EchoReply> responses) {
            responses.setOnCancelHandler(serverSawCancel::countDown); // and never answers
          }
        });
    Recorder<EchoReply> r = new Recorder<>();
    echo.count( // (the handler must start before its deadline, on a handler thread: 1 s for it)
        CountRequest.newBuilder().setN(1).build(),
        r,
        CallOptions.DEFAULT.withTimeout(Duration.ofMillis(1_000)));
    assertThat(r.failure().status().code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(serverSawCancel.await(10, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void clientStream_sendsEveryRequestInOrder() throws Exception {
    serve(observerEcho);
    Recorder<EchoReply> r = new Recorder<>();
    ClientCallStreamObserver<EchoRequest> requests = echo.collect(r);
    StringBuilder expected = new StringBuilder();
    for (int i = 0; i < 500; i++) { // from this thread: held back past the server's credit
      requests.onNext(request(i + ","));
      expected.append(i).append(',');
    }
    requests.onCompleted();
    EchoReply reply = r.await().get(0);
    assertThat(reply.getSequence()).isEqualTo(500);
    assertThat(reply.getPayload().toStringUtf8()).isEqualTo(expected.toString());
  }

  @Test
  void bidiStream_echoesInOrder_andWorksAgainstTheReactorService() throws Exception {
    for (boolean reactorServer : new boolean[] {false, true}) {
      if (reactorServer) {
        tcp.close();
        tcp =
            RpcOverTcp.serve(
                RpcServer.builder()
                    .service(io.millrace.echo.v1.EchoServiceReactor.bind(new EchoServiceImpl()))
                    .build());
        echo = new EchoServiceObserver.Client(tcp.client());
      } else {
        serve(observerEcho);
      }
      Recorder<EchoReply> r = new Recorder<>();
      ClientCallStreamObserver<EchoRequest> requests = echo.chat(r);
      for (int i = 0; i < 2_000; i++) {
        requests.onNext(request("m" + i));
      }
      requests.onCompleted();
      List<EchoReply> replies = r.await();
      assertThat(replies).hasSize(2_000);
      for (int i = 0; i < 2_000; i++) {
        assertThat(replies.get(i).getSequence()).isEqualTo(i);
        assertThat(replies.get(i).getPayload().toStringUtf8()).isEqualTo("m" + i);
      }
    }
  }

  @Test
  void fireAndForget_reachesTheHandler() throws Exception {
    serve(observerEcho);
    for (int i = 0; i < 100; i++) {
      echo.notify(request("n"));
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (notified.get() < 100 && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertThat(notified.get()).isEqualTo(100);
  }

  @Test
  void handlerReturningNoRequestObserver_isInternal() throws Exception {
    serve(
        new DelegatingService(observerEcho) {
          @Override
          public StreamObserver<EchoRequest> collect(
              ServerContext context, ServerCallStreamObserver<EchoReply> responses) {
            return null;
          }
        });
    Recorder<EchoReply> r = new Recorder<>();
    ClientCallStreamObserver<EchoRequest> requests = echo.collect(r); // opens the call
    assertThat(r.failure().status().code()).isEqualTo(Status.Code.INTERNAL);
    // The call is over for the sending side too: what is sent now is dropped, never queued.
    ServerCallStreamObserver<?> sending = (ServerCallStreamObserver<?>) requests;
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!sending.isCancelled() && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertThat(sending.isCancelled()).isTrue();
    requests.onNext(request("dropped")); // returns: neither throws nor waits for credit
    assertThat(requests.isReady()).isFalse();
  }

  @Test
  void clientCancel_reachesTheServersRequestObserver() throws Exception {
    CompletableFuture<Throwable> requestsFailed = new CompletableFuture<>();
    CountDownLatch firstRequest = new CountDownLatch(1);
    serve(
        new DelegatingService(observerEcho) {
          @Override
          public StreamObserver<EchoRequest> chat(
              ServerContext context, ServerCallStreamObserver<EchoReply> responses) {
            return new StreamObserver<>() {
              @Override
              public void onNext(EchoRequest value) {
                firstRequest.countDown();
              }

              @Override
              public void onError(Throwable t) {
                requestsFailed.complete(t);
              }

              @Override
              public void onCompleted() {
                requestsFailed.completeExceptionally(new AssertionError("completed"));
              }
            };
          }
        });
    Recorder<EchoReply> r = new Recorder<>();
    ClientCallStreamObserver<EchoRequest> requests = echo.chat(r);
    requests.onNext(request("hello"));
    assertThat(firstRequest.await(10, TimeUnit.SECONDS)).isTrue();
    requests.cancel("changed my mind", null);
    assertThat(r.failure().status().code()).isEqualTo(Status.Code.CANCELLED);
    Throwable t = requestsFailed.get(10, TimeUnit.SECONDS);
    assertThat(t).isInstanceOf(StatusException.class);
    assertThat(((StatusException) t).status().code()).isEqualTo(Status.Code.CANCELLED);
  }

  /** A service that passes every method to another, for tests that change one. */
  private static class DelegatingService implements EchoServiceObserver.Service {
    private final EchoServiceObserver.Service to;

    DelegatingService(EchoServiceObserver.Service to) {
      this.to = to;
    }

    @Override
    public void echo(
        EchoRequest request, ServerContext context, ServerCallStreamObserver<EchoReply> r) {
      to.echo(request, context, r);
    }

    @Override
    public void count(
        CountRequest request, ServerContext context, ServerCallStreamObserver<EchoReply> r) {
      to.count(request, context, r);
    }

    @Override
    public StreamObserver<EchoRequest> collect(
        ServerContext context, ServerCallStreamObserver<EchoReply> r) {
      return to.collect(context, r);
    }

    @Override
    public StreamObserver<EchoRequest> chat(
        ServerContext context, ServerCallStreamObserver<EchoReply> r) {
      return to.chat(context, r);
    }

    @Override
    public void notify(EchoRequest request, ServerContext context) {
      to.notify(request, context);
    }
  }
}

package io.millrace.cli;

import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.ConnectionListener;
import io.millrace.core.Reconnect;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.rpc.CallOptions;
import io.millrace.rpc.MethodDescriptor;
import io.millrace.rpc.RpcServer;
import io.millrace.transport.netty.MillraceClient;
import io.millrace.transport.netty.TransportUri;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code millrace call}: one request of any interaction, printing each payload received as a line
 * (data as UTF-8, then a TAB and the metadata when the payload has metadata).
 *
 * <p>Exit codes: 0 on completion, 1 after an ERROR frame (printed to stderr as {@code ERROR
 * 0x<code> <message>}), 2 when nothing completed within the timeout, 3 when the connection could
 * not be made. With {@code --repeat}, the highest code of the calls made.
 */
@Command(
    name = "call",
    mixinStandardHelpOptions = true,
    description = "Sends one request and prints what comes back, one payload per line.")
final class CallCommand implements Callable<Integer> {
  static final int EXIT_OK = 0;
  static final int EXIT_ERROR_FRAME = 1;
  static final int EXIT_TIMEOUT = 2;
  static final int EXIT_CONNECT_FAILED = 3;

  enum Interaction {
    REQUEST_RESPONSE("request-response"),
    FIRE_AND_FORGET("fire-and-forget"),
    REQUEST_STREAM("request-stream"),
    REQUEST_CHANNEL("request-channel");

    final String cliName;

    Interaction(String cliName) {
      this.cliName = cliName;
    }

    static Interaction parse(String name) {
      for (Interaction interaction : values()) {
        if (interaction.cliName.equals(name)) {
          return interaction;
        }
      }
      throw new IllegalArgumentException(
          "unknown interaction '"
              + name
              + "': use request-response, fire-and-forget, request-stream or request-channel");
    }
  }

  @Spec CommandSpec spec;

  @Mixin TransportOptions transport;

  @Option(
      names = "--interaction",
      converter = InteractionConverter.class,
      description =
          "request-response, fire-and-forget, request-stream or request-channel (required unless"
              + " --rpc is given).")
  Interaction interaction;

  @Option(
      names = "--url",
      paramLabel = "URI",
      description =
          "Connect to URI: tcp://H:P, tls://H:P, ws://H:P/PATH, wss://H:P/PATH, unix:///path"
              + " (default: tcp://--host:--port).")
  String url;

  @Option(names = "--data", defaultValue = "", description = "Request data (UTF-8).")
  String data;

  @Option(names = "--metadata", description = "Request metadata (UTF-8); none when absent.")
  String metadata;

  @Option(
      names = "--request-n",
      defaultValue = "0",
      description = "Ask for N at first and N more each time N arrived (default: unbounded).")
  long requestN;

  @Option(
      names = "--inputs",
      split = ",",
      description = "request-channel: payloads sent after the first one, then completes.")
  List<String> inputs = List.of();

  @Option(names = "--take", defaultValue = "0", description = "Cancel after K payloads.")
  long take;

  @Option(
      names = "--timeout",
      defaultValue = "10",
      description = "Seconds to wait for completion before exiting with 2 (default: 10).")
  long timeoutSeconds;

  @Option(
      names = "--reconnect",
      description =
          "Make a new connection by itself when the connection is lost, with exponential backoff"
              + " and jitter; the first connect is retried too, until --timeout. Without --resume,"
              + " what was in flight fails; requests made meanwhile wait for the new connection"
              + " (at most --timeout), or fail at once with --fail-fast.")
  boolean reconnect;

  @Option(
      names = "--fail-fast",
      description = "With --reconnect: requests made while there is no connection fail at once.")
  boolean failFast;

  @Option(
      names = "--repeat",
      defaultValue = "1",
      description = "Send the request N times, one after the other (default: 1).")
  int repeat;

  @Option(
      names = "--interval",
      defaultValue = "0",
      description = "With --repeat: milliseconds between one request's end and the next.")
  long intervalMillis;

  @Option(
      names = "--rpc",
      paramLabel = "package.Service/Method",
      description =
          "Call an RPC method instead (requests from --json, or JSON lines on stdin for a method"
              + " that takes a stream); each reply is printed as one JSON line.")
  String rpcMethod;

  @Option(
      names = "--json",
      description = "An RPC request in protobuf's JSON mapping; repeat it for a stream.")
  List<String> json = new ArrayList<>();

  @Option(
      names = "--metadata-mime",
      description =
          "Metadata MIME type of the connection (default application/binary). With --rpc: "
              + RpcServer.METADATA_MIME_TYPE
              + " (the default, Millrace's call header) or "
              + RpcServer.ROUTED_METADATA_MIME_TYPE
              + " (the route in composite metadata, as rsocket-java and Spring clients call).")
  String metadataMime;

  @Option(names = "--data-mime", defaultValue = "application/binary")
  String dataMime;

  static final class InteractionConverter
      implements picocli.CommandLine.ITypeConverter<Interaction> {
    @Override
    public Interaction convert(String value) {
      return Interaction.parse(value);
    }
  }

  @Override
  public Integer call() throws InterruptedException, java.io.IOException {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    if (repeat < 1) {
      err.println("--repeat must be at least 1");
      err.flush();
      return picocli.CommandLine.ExitCode.USAGE;
    }
    if ((interaction == null) == (rpcMethod == null)) {
      err.println("give exactly one of --interaction and --rpc");
      err.flush();
      return picocli.CommandLine.ExitCode.USAGE;
    }
    MethodDescriptor<?, ?> rpc = null;
    if (rpcMethod != null) {
      if (metadataMime != null
          && !metadataMime.equals(RpcServer.METADATA_MIME_TYPE)
          && !routedRpc()) {
        err.println(
            "--rpc calls with metadata "
                + RpcServer.METADATA_MIME_TYPE
                + " or "
                + RpcServer.ROUTED_METADATA_MIME_TYPE
                + ", not "
                + metadataMime);
        err.flush();
        return picocli.CommandLine.ExitCode.USAGE;
      }
      rpc = RpcCall.method(rpcMethod);
      if (rpc == null) {
        err.println("unknown RPC method " + rpcMethod + "; this build knows " + RpcCall.known());
        err.flush();
        return picocli.CommandLine.ExitCode.USAGE;
      }
      if (json.isEmpty()) {
        if (System.console() != null) {
          err.println("give the request with --json, or pipe JSON on stdin");
          err.flush();
          return picocli.CommandLine.ExitCode.USAGE;
        }
        json = readStdin(rpc);
      }
      try {
        rpcRequests = RpcCall.parse(rpc, json);
      } catch (IllegalArgumentException e) {
        err.println(e.getMessage());
        err.flush();
        return picocli.CommandLine.ExitCode.USAGE;
      }
    }
    ConnectionConfig.Builder config =
        transport
            .config()
            .mimeTypes(connectionMetadataMime(), dataMime)
            .drainTimeout(Duration.ofSeconds(timeoutSeconds));
    if (reconnect) {
      config.reconnect(
          Reconnect.builder()
              .whileDisconnected(
                  failFast
                      ? Reconnect.WhileDisconnected.FAIL_FAST
                      : Reconnect.WhileDisconnected.WAIT)
              .maxWait(Duration.ofSeconds(timeoutSeconds))
              .build());
    }
    if (url != null) {
      TransportOptions.refuseBeside(spec, "--url", "--host", "--port");
    }
    transport.refuseContradictoryTls(spec);
    TransportUri target =
        url != null ? TransportUri.parse(url) : TransportUri.tcp(transport.host, transport.port);
    MillraceClient.Builder builder =
        MillraceClient.builder().config(config.build()).ioKind(transport.ioKind());
    if (target.scheme().secure()) {
      builder.tls(transport.clientTls());
    }
    try (MillraceClient client = builder.build()) {
      Connection connection;
      try {
        connection = client.connect(target, null, null).get(timeoutSeconds, TimeUnit.SECONDS);
      } catch (ExecutionException | TimeoutException e) {
        Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
        err.println("cannot connect to " + target + ": " + cause);
        err.flush();
        return EXIT_CONNECT_FAILED;
      }
      if (transport.resume || reconnect) {
        connection.addListener(sessionReporter(err));
      }
      int code = EXIT_OK;
      for (int i = 0; i < repeat; i++) {
        if (i > 0 && intervalMillis > 0) {
          Thread.sleep(intervalMillis);
        }
        int one = rpc != null ? rpcOnce(connection, rpc, out, err) : callOnce(connection, out, err);
        code = Math.max(code, one);
        if (one == EXIT_TIMEOUT) {
          break;
        }
      }
      connection.executor().submit(() -> out.flush()).await(1, TimeUnit.SECONDS);
      // A graceful close: what was sent (a fire-and-forget, a cancel) reaches the server first.
      connection.close();
      try {
        connection.onClose().toCompletableFuture().get(timeoutSeconds, TimeUnit.SECONDS);
      } catch (ExecutionException | TimeoutException e) {
        // closing anyway
      }
      return code;
    } finally {
      out.flush();
      err.flush();
    }
  }

  private List<Object> rpcRequests;

  /** Whether an RPC call routes with composite metadata instead of Millrace's call header. */
  private boolean routedRpc() {
    return RpcServer.ROUTED_METADATA_MIME_TYPE.equals(metadataMime);
  }

  private String connectionMetadataMime() {
    if (rpcMethod != null) {
      return routedRpc() ? RpcServer.ROUTED_METADATA_MIME_TYPE : RpcServer.METADATA_MIME_TYPE;
    }
    return metadataMime != null ? metadataMime : "application/binary";
  }

  /** Makes the RPC call once and waits for its end; returns its exit code. */
  private int rpcOnce(
      Connection connection, MethodDescriptor<?, ?> method, PrintWriter out, PrintWriter err)
      throws InterruptedException {
    return awaitExit(
        RpcCall.start(
            connection,
            method,
            rpcRequests,
            CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(timeoutSeconds)),
            routedRpc(),
            out,
            err),
        timeoutSeconds + 1,
        err);
  }

  /** Waits for a call's exit code: EXIT_TIMEOUT after {@code seconds}, the failure reported. */
  private int awaitExit(CompletableFuture<Integer> exit, long seconds, PrintWriter err)
      throws InterruptedException {
    try {
      return exit.get(seconds, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      err.println("no completion within " + timeoutSeconds + " s");
      return EXIT_TIMEOUT;
    } catch (ExecutionException e) {
      err.println("failed: " + e.getCause());
      return EXIT_ERROR_FRAME;
    } finally {
      err.flush();
    }
  }

  /**
   * JSON requests from stdin: the whole input is one request for a method that takes one (so a
   * pretty-printed document works), one request per non-blank line for a stream.
   */
  private static List<String> readStdin(MethodDescriptor<?, ?> method) {
    String all;
    try {
      all = new String(System.in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    if (!method.type().clientSendsStream()) {
      return all.isBlank() ? List.of() : List.of(all);
    }
    return all.lines().filter(l -> !l.isBlank()).toList();
  }

  /** Sends the request once and waits for its end; returns its exit code. */
  private int callOnce(Connection connection, PrintWriter out, PrintWriter err)
      throws InterruptedException {
    if (interaction == Interaction.FIRE_AND_FORGET
        && reconnect
        && !failFast
        && !connection.awaitReadyForCalls(Duration.ofSeconds(timeoutSeconds))) {
      // Nothing answers a fire-and-forget: without a connection to send it on, say so.
      err.println("fire-and-forget not sent: no connection within " + timeoutSeconds + " s");
      return EXIT_ERROR_FRAME;
    }
    CompletableFuture<Integer> exit = new CompletableFuture<>();
    Printer printer = new Printer(out, err, exit);
    connection.executor().execute(() -> start(connection, printer, exit));
    return awaitExit(exit, timeoutSeconds, err);
  }

  /**
   * With --resume or --reconnect: what happens to the connection goes to stderr, so stdout stays
   * the payloads.
   */
  private static ConnectionListener sessionReporter(PrintWriter err) {
    return new ConnectionListener() {
      @Override
      public void onDisconnected(Connection connection, String reason) {
        err.println("millrace: connection lost (" + reason + "); reconnecting");
        err.flush();
      }

      @Override
      public void onResumed(Connection connection) {
        err.println("millrace: resumed");
        err.flush();
      }

      @Override
      public void onReconnected(Connection connection) {
        err.println("millrace: reconnected");
        err.flush();
      }

      @Override
      public void onResumeRejected(Connection connection, String message) {
        err.println("millrace: resume rejected: " + message);
        err.flush();
      }
    };
  }

  private void start(Connection connection, Printer printer, CompletableFuture<Integer> exit) {
    ByteBuf metadataBuf =
        metadata == null ? null : ByteBufUtil.writeUtf8(connection.alloc(), metadata);
    ByteBuf dataBuf = ByteBufUtil.writeUtf8(connection.alloc(), data);
    long initial = requestN > 0 ? requestN : Long.MAX_VALUE;
    switch (interaction) {
      case FIRE_AND_FORGET:
        if (connection.fireAndForget(metadataBuf, dataBuf)) {
          exit.complete(EXIT_OK); // the graceful close that follows delivers it
        } else {
          printer.err.println("fire-and-forget not sent: no connection");
          exit.complete(EXIT_ERROR_FRAME);
        }
        break;
      case REQUEST_RESPONSE:
        connection.requestResponse(metadataBuf, dataBuf, printer);
        break;
      case REQUEST_STREAM:
        connection.requestStream(metadataBuf, dataBuf, initial, printer);
        break;
      case REQUEST_CHANNEL:
        printer.inputs = inputs;
        printer.outboundComplete = inputs.isEmpty();
        connection.requestChannel(metadataBuf, dataBuf, initial, inputs.isEmpty(), printer);
        break;
    }
  }

  /** Prints payloads and drives request-n, --take and the channel's inputs. */
  private final class Printer implements StreamListener {
    private final PrintWriter out;
    private final PrintWriter err;
    private final CompletableFuture<Integer> exit;
    List<String> inputs = List.of();
    private int nextInput;
    boolean outboundComplete;
    private long received;
    private long sinceRequest;

    Printer(PrintWriter out, PrintWriter err, CompletableFuture<Integer> exit) {
      this.out = out;
      this.err = err;
      this.exit = exit;
    }

    @Override
    public void onNext(Stream stream, ByteBuf metadata, ByteBuf data) {
      out.print(data.toString(StandardCharsets.UTF_8));
      if (metadata != null) {
        out.print('\t');
        out.print(metadata.toString(StandardCharsets.UTF_8));
      }
      out.print('\n');
      received++;
      if (take > 0 && received >= take) {
        stream.cancel();
        out.flush();
        exit.complete(EXIT_OK);
        return;
      }
      if (requestN > 0 && ++sinceRequest == requestN) {
        sinceRequest = 0;
        stream.request(requestN);
      }
    }

    @Override
    public void onComplete(Stream stream) {
      out.flush();
      exit.complete(EXIT_OK);
    }

    @Override
    public void onError(Stream stream, int errorCode, String message) {
      out.flush();
      err.printf("ERROR 0x%08x %s%n", errorCode, message);
      err.flush();
      exit.complete(EXIT_ERROR_FRAME);
    }

    @Override
    public void onReady(Stream stream) {
      while (nextInput < inputs.size() && stream.isReady()) {
        String input = inputs.get(nextInput++);
        stream.next(null, ByteBufUtil.writeUtf8(stream.connection().alloc(), input));
      }
      if (nextInput == inputs.size() && !outboundComplete) {
        outboundComplete = true;
        stream.complete();
      }
    }
  }
}

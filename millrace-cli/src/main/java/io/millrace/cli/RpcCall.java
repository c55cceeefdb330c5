package io.millrace.cli;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import io.millrace.core.Connection;
import io.millrace.echo.v1.EchoServiceRpc;
import io.millrace.rpc.CallOptions;
import io.millrace.rpc.MethodDescriptor;
import io.millrace.rpc.ProtobufMarshaller;
import io.millrace.rpc.RpcClient;
import io.millrace.rpc.StatusException;
import io.millrace.streams.ReactiveRequester;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.publisher.Flux;

/**
 * {@code millrace call --rpc package.Service/Method}: requests as JSON (protobuf's JSON mapping),
 * each reply printed as one compact JSON line; a failed call prints its status to stderr and exits
 * 1. Knows the services this build carries (today millrace.echo.v1.EchoService); server reflection
 * will make it general.
 */
final class RpcCall {
  private static final Map<String, MethodDescriptor<?, ?>> KNOWN = new LinkedHashMap<>();

  static {
    for (MethodDescriptor<?, ?> m : EchoServiceRpc.methods()) {
      KNOWN.put(m.fullName(), m);
    }
  }

  private RpcCall() {}

  /** The known method named {@code fullName}, or null. */
  static MethodDescriptor<?, ?> method(String fullName) {
    return KNOWN.get(fullName);
  }

  static String known() {
    return String.join(", ", KNOWN.keySet());
  }

  /**
   * Parses the requests before anything connects: one for a method that takes one, any number for
   * one that takes a stream. Throws IllegalArgumentException (bad JSON included) for a usage error.
   */
  static List<Object> parse(MethodDescriptor<?, ?> method, List<String> jsonRequests) {
    List<Object> requests = new ArrayList<>();
    for (String json : jsonRequests) {
      try {
        requests.add(parse(method, json));
      } catch (InvalidProtocolBufferException e) {
        throw new IllegalArgumentException(
            "not a " + method.fullName() + " request: " + e.getMessage());
      }
    }
    if (!method.type().clientSendsStream() && requests.size() != 1) {
      throw new IllegalArgumentException(
          method.fullName() + " takes one request: give one --json, not " + requests.size());
    }
    return requests;
  }

  /** Starts the call; the future completes with the exit code. */
  static CompletableFuture<Integer> start(
      Connection connection,
      MethodDescriptor<?, ?> method,
      List<Object> requests,
      CallOptions options,
      boolean routed,
      PrintWriter out,
      PrintWriter err) {
    return startTyped(connection, method, requests, options, routed, out, err);
  }

  @SuppressWarnings("unchecked")
  private static <Req, Resp> CompletableFuture<Integer> startTyped(
      Connection connection,
      MethodDescriptor<Req, Resp> method,
      List<Object> parsed,
      CallOptions options,
      boolean routed,
      PrintWriter out,
      PrintWriter err) {
    List<Req> requests = (List<Req>) (List<?>) parsed;
    ReactiveRequester requester = ReactiveRequester.of(connection);
    RpcClient rpc = routed ? RpcClient.routing(requester) : RpcClient.of(requester);
    Publisher<?> replies =
        method.fireAndForget()
            ? rpc.fireAndForget(method, requests.get(0), options)
            : switch (method.type()) {
              case UNARY -> rpc.unary(method, requests.get(0), options);
              case SERVER_STREAMING -> rpc.serverStreaming(method, requests.get(0), options);
              case CLIENT_STREAMING ->
                  rpc.clientStreaming(method, Flux.fromIterable(requests), options);
              case BIDI_STREAMING ->
                  rpc.bidiStreaming(method, Flux.fromIterable(requests), options);
            };
    CompletableFuture<Integer> exit = new CompletableFuture<>();
    JsonFormat.Printer printer = JsonFormat.printer().omittingInsignificantWhitespace();
    replies.subscribe(
        new Subscriber<Object>() {
          @Override
          public void onSubscribe(Subscription s) {
            s.request(Long.MAX_VALUE);
          }

          @Override
          public void onNext(Object reply) {
            try {
              out.println(printer.print((Message) reply));
            } catch (InvalidProtocolBufferException e) {
              out.println("{}"); // a message JSON cannot show (never for the known services)
            }
          }

          @Override
          public void onError(Throwable t) {
            out.flush();
            err.println(t instanceof StatusException se ? se.status().toString() : t.toString());
            err.flush();
            boolean deadline =
                t instanceof StatusException se
                    && se.status().code() == io.millrace.rpc.Status.Code.DEADLINE_EXCEEDED;
            exit.complete(deadline ? CallCommand.EXIT_TIMEOUT : CallCommand.EXIT_ERROR_FRAME);
          }

          @Override
          public void onComplete() {
            out.flush();
            exit.complete(CallCommand.EXIT_OK);
          }
        });
    return exit;
  }

  @SuppressWarnings("unchecked")
  private static <Req> Req parse(MethodDescriptor<Req, ?> method, String json)
      throws InvalidProtocolBufferException {
    Message prototype =
        (Message) ((ProtobufMarshaller<?>) method.requestMarshaller()).defaultInstance();
    Message.Builder builder = prototype.newBuilderForType();
    JsonFormat.parser().merge(json, builder);
    return (Req) builder.build();
  }
}

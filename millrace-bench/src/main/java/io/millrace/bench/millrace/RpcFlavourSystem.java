package io.millrace.bench.millrace;

import com.google.protobuf.ByteString;
import io.millrace.bench.v1.BenchMessage;
import io.millrace.core.Acceptor;
import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.rpc.RpcClient;
import io.millrace.rpc.RpcServer;
import io.millrace.rpc.ServiceDefinition;
import io.millrace.streams.ReactiveRequester;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.util.concurrent.atomic.LongAdder;

/**
 * Millrace RPC through one generated flavour of {@code bench.proto}'s BenchService, used as a user
 * of that flavour would: a message of the run's payload size each way, the call header on every
 * request and protobuf on both sides. The subclass gives the service and the client's calls.
 */
abstract class RpcFlavourSystem extends FlavourSystem {

  static BenchMessage message(ByteBuf payload) {
    return BenchMessage.newBuilder()
        .setPayload(ByteString.copyFrom(ByteBufUtil.getBytes(payload)))
        .build();
  }

  /**
   * BenchService: Echo answers with {@code reply}, Stream sends {@code reply} until cancelled,
   * Channel answers each request, Send is counted; each message counted in {@code handled}.
   */
  abstract ServiceDefinition service(BenchMessage reply, LongAdder handled);

  /** The client's calls, each sending {@code request}. */
  abstract Calls calls(RpcClient rpc, BenchMessage request);

  /** The server's settings (a handler executor, for one). */
  RpcServer.Builder server() {
    return RpcServer.builder();
  }

  @Override
  final Acceptor acceptor(ByteBuf response, LongAdder handled) {
    RpcServer rpc = server().service(service(message(response), handled)).build();
    return rpc::responder;
  }

  @Override
  final ConnectionConfig clientConfig() {
    return ConnectionConfig.builder()
        .mimeTypes(RpcServer.METADATA_MIME_TYPE, "application/x-protobuf")
        .build();
  }

  @Override
  final Calls calls(Connection connection, ByteBuf payload) {
    return calls(RpcClient.of(ReactiveRequester.of(connection)), message(payload));
  }
}

package io.millrace.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** The call header and the response metadata, byte for byte, without sockets. */
class CallHeaderTest {
  private static final String ECHO = "millrace.echo.v1.EchoService/Echo";
  private static final int LIMIT = 8192;

  private static ByteBuf encoded(Consumer<ByteBuf> writer) {
    ByteBuf b = Unpooled.buffer();
    writer.accept(b);
    return b;
  }

  @Test
  void theCommonCall_isNineBytes_andReadsBack() {
    long id = MethodIds.of(ECHO);
    ByteBuf b = encoded(out -> CallHeader.encode(out, id, null, CallHeader.NO_TIMEOUT, null));
    try {
      assertThat(b.readableBytes()).isEqualTo(9);
      assertThat(b.getByte(0)).isEqualTo((byte) 0x20); // version 1, no flags
      CallHeader h = CallHeader.decode(b, LIMIT);
      assertThat(h.methodId()).isEqualTo(id);
      assertThat(h.methodName()).isNull();
      assertThat(h.timeoutMicros()).isEqualTo(CallHeader.NO_TIMEOUT);
      assertThat(h.headers()).isSameAs(Headers.EMPTY);
      assertThat(b.readerIndex()).as("decoding leaves the metadata as it was").isZero();
      assertThat(CallHeader.isPlain(b)).isTrue();
      assertThat(CallHeader.plainMethodId(b)).isEqualTo(id);
    } finally {
      b.release();
    }
  }

  @Test
  void onlyTheNineByteForm_isPlain() {
    long id = MethodIds.of(ECHO);
    Headers headers = new Headers().put("k", "v");
    for (Consumer<ByteBuf> header :
        java.util.List.<Consumer<ByteBuf>>of(
            out -> CallHeader.encode(out, id, null, 5, null),
            out -> CallHeader.encode(out, id, null, CallHeader.NO_TIMEOUT, headers),
            out -> CallHeader.encode(out, 0, ECHO, CallHeader.NO_TIMEOUT, null),
            out -> CallHeader.encode(out, id, null, CallHeader.NO_TIMEOUT, null, true),
            out -> out.writeByte(0x40).writeLong(id), // another version
            out -> out.writeByte(0x20).writeLong(id).writeByte(0))) { // a byte too many
      ByteBuf b = encoded(header);
      try {
        assertThat(CallHeader.isPlain(b)).as(b.toString()).isFalse();
      } finally {
        b.release();
      }
    }
    assertThat(CallHeader.isPlain(null)).isFalse();
  }

  @Test
  void aNamedCallWithDeadlineAndHeaders_readsBack() {
    Headers headers =
        new Headers().put("authorization", "Bearer x").putBinary("trace-bin", new byte[] {1, 2});
    ByteBuf b = encoded(out -> CallHeader.encode(out, 0, ECHO, 1_500_000, headers));
    try {
      CallHeader h = CallHeader.decode(b, LIMIT);
      assertThat(h.methodName()).isEqualTo(ECHO);
      assertThat(h.methodId())
          .as("the id of a named call is its name's")
          .isEqualTo(MethodIds.of(ECHO));
      assertThat(h.timeoutMicros()).isEqualTo(1_500_000);
      assertThat(h.headers().get("authorization")).isEqualTo("Bearer x");
      assertThat(h.headers().getBinary("trace-bin")).containsExactly(1, 2);
    } finally {
      b.release();
    }
  }

  @Test
  void aZeroTimeout_travels() {
    ByteBuf b = encoded(out -> CallHeader.encode(out, 7, null, 0, Headers.EMPTY));
    try {
      assertThat(CallHeader.decode(b, LIMIT).timeoutMicros()).isZero();
      assertThat(b.readableBytes()).isEqualTo(10);
    } finally {
      b.release();
    }
  }

  @Test
  void everyTruncation_isInternal_neverAnIndexError() {
    Headers headers = new Headers().put("k", "v").put("long-key", "x".repeat(300));
    ByteBuf full = encoded(out -> CallHeader.encode(out, 0, ECHO, 123_456_789, headers));
    try {
      for (int n = 0; n < full.readableBytes(); n++) {
        ByteBuf prefix = full.slice(0, n);
        assertThatThrownBy(() -> CallHeader.decode(prefix, LIMIT))
            .as("prefix of %d bytes", n)
            .isInstanceOfSatisfying(
                StatusException.class,
                e -> assertThat(e.status().code()).isEqualTo(Status.Code.INTERNAL));
      }
      ByteBuf longer = Unpooled.wrappedBuffer(full.copy(), Unpooled.wrappedBuffer(new byte[] {0}));
      try {
        assertThatThrownBy(() -> CallHeader.decode(longer, LIMIT))
            .hasMessageContaining("1 bytes after the call header");
      } finally {
        longer.release();
      }
    } finally {
      full.release();
    }
  }

  @Test
  void anotherVersion_isUnimplemented_andUnknownFlagsInternal() {
    ByteBuf v2 = Unpooled.wrappedBuffer(new byte[] {0x40, 0, 0, 0, 0, 0, 0, 0, 1});
    ByteBuf flags = Unpooled.wrappedBuffer(new byte[] {0x30, 0, 0, 0, 0, 0, 0, 0, 1});
    assertThatThrownBy(() -> CallHeader.decode(v2, LIMIT))
        .isInstanceOfSatisfying(
            StatusException.class,
            e -> assertThat(e.status().code()).isEqualTo(Status.Code.UNIMPLEMENTED));
    assertThatThrownBy(() -> CallHeader.decode(flags, LIMIT))
        .isInstanceOfSatisfying(
            StatusException.class,
            e -> assertThat(e.status().code()).isEqualTo(Status.Code.INTERNAL));
    assertThatThrownBy(() -> CallHeader.decode(null, LIMIT)).hasMessageContaining("no call header");
  }

  @Test
  void hostileLengths_failBeforeAllocating() {
    // HEADERS flag, id, then a header count of 2^62 and a key length of 2^31.
    ByteBuf count =
        Unpooled.wrappedBuffer(
            new byte[] {
              0x24,
              0,
              0,
              0,
              0,
              0,
              0,
              0,
              1,
              (byte) 0x80,
              (byte) 0x80,
              (byte) 0x80,
              (byte) 0x80,
              (byte) 0x80,
              (byte) 0x80,
              (byte) 0x80,
              (byte) 0x80,
              0x40
            });
    ByteBuf key =
        Unpooled.wrappedBuffer(
            new byte[] {
              0x24,
              0,
              0,
              0,
              0,
              0,
              0,
              0,
              1,
              1,
              (byte) 0x80,
              (byte) 0x80,
              (byte) 0x80,
              (byte) 0x80,
              0x08,
              'k',
              'v'
            });
    ByteBuf varint = Unpooled.wrappedBuffer(new byte[19]);
    varint.setByte(0, 0x22); // DEADLINE, the id, then a varint of ten continuation bytes
    for (int i = 9; i < 19; i++) {
      varint.setByte(i, 0x80);
    }
    ByteBuf named = Unpooled.wrappedBuffer(new byte[] {0x21, (byte) 0xFF, (byte) 0xFF, 0x7F});
    for (ByteBuf b : new ByteBuf[] {count, key, varint, named}) {
      assertThatThrownBy(() -> CallHeader.decode(b, LIMIT))
          .isInstanceOfSatisfying(
              StatusException.class,
              e -> assertThat(e.status().code()).isEqualTo(Status.Code.INTERNAL));
    }
  }

  @Test
  void headersOverTheLimit_areResourceExhausted() {
    Headers big = new Headers().put("a", "x".repeat(100)).put("b", "y".repeat(100));
    ByteBuf b = encoded(out -> CallHeader.encode(out, 1, null, CallHeader.NO_TIMEOUT, big));
    try {
      int limit = 2 * (1 + 100 + Headers.ENTRY_OVERHEAD);
      assertThat(CallHeader.decode(b, limit).headers().size()).isEqualTo(2);
      assertThatThrownBy(() -> CallHeader.decode(b, limit - 1))
          .isInstanceOfSatisfying(
              StatusException.class,
              e -> {
                assertThat(e.status().code()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
                assertThat(e.getMessage()).contains((limit - 1) + " bytes");
              });
    } finally {
      b.release();
    }
  }

  @Test
  void receivedHeaders_areCheckedLikeSentOnes_butReservedKeysPass() {
    // HEADERS, id, one header "grpc-x" = "ok", then one whose key has an upper case letter.
    byte[] ok = {0x24, 0, 0, 0, 0, 0, 0, 0, 1, 1, 6, 'g', 'r', 'p', 'c', '-', 'x', 2, 'o', 'k'};
    byte[] upper = {0x24, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 'K', 1, 'v'};
    byte[] control = {0x24, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 'k', 1, '\n'};
    assertThat(CallHeader.decode(Unpooled.wrappedBuffer(ok), LIMIT).headers().get("grpc-x"))
        .isEqualTo("ok");
    assertThatThrownBy(() -> CallHeader.decode(Unpooled.wrappedBuffer(upper), LIMIT))
        .hasMessageContaining("malformed call header");
    assertThatThrownBy(() -> CallHeader.decode(Unpooled.wrappedBuffer(control), LIMIT))
        .hasMessageContaining("printable ASCII");
  }

  @Test
  void responseMetadata_headersAndTrailer_readBack() {
    Headers headers = new Headers().put("x-served-by", "a");
    Headers trailers = new Headers().putBinary("cost-bin", new byte[] {9});
    Status failed =
        Status.of(Status.Code.FAILED_PRECONDITION)
            .withMessage("ünïcode kept")
            .withDetails(ByteString.copyFrom(new byte[] {1, 2, 3}));
    ByteBuf b = encoded(out -> ResponseMetadata.encode(out, headers, failed, trailers));
    try {
      ResponseMetadata m = ResponseMetadata.decode(b, LIMIT);
      assertThat(m.headers().get("x-served-by")).isEqualTo("a");
      assertThat(m.status()).isEqualTo(failed);
      assertThat(m.trailers().getBinary("cost-bin")).containsExactly(9);
      for (int n = 0; n < b.readableBytes(); n++) {
        ByteBuf prefix = b.slice(0, n);
        assertThatThrownBy(() -> ResponseMetadata.decode(prefix, LIMIT))
            .as("prefix of %d bytes", n)
            .isInstanceOf(StatusException.class);
      }
    } finally {
      b.release();
    }
  }

  @Test
  void responseMetadata_headersOnly_haveNoStatus_andAnOkTrailerIsFiveBytes() {
    ByteBuf onlyHeaders =
        encoded(out -> ResponseMetadata.encode(out, new Headers().put("a", "b"), null, null));
    ByteBuf okTrailer = encoded(out -> ResponseMetadata.encode(out, null, Status.OK, null));
    try {
      assertThat(ResponseMetadata.decode(onlyHeaders, LIMIT).status()).isNull();
      assertThat(okTrailer.readableBytes()).as("flags, code, message, details, count").isEqualTo(5);
      ResponseMetadata ok = ResponseMetadata.decode(okTrailer, LIMIT);
      assertThat(ok.status()).isEqualTo(Status.OK);
      assertThat(ok.status().message()).isNull();
    } finally {
      onlyHeaders.release();
      okTrailer.release();
    }
  }
}

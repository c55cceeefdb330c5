package io.millrace.frame;

import static io.millrace.frame.FrameHeader.FLAG_COMPLETE;
import static io.millrace.frame.FrameHeader.FLAG_FOLLOWS;
import static io.millrace.frame.FrameHeader.FLAG_IGNORE;
import static io.millrace.frame.FrameHeader.FLAG_LEASE;
import static io.millrace.frame.FrameHeader.FLAG_METADATA;
import static io.millrace.frame.FrameHeader.FLAG_NEXT;
import static io.millrace.frame.FrameHeader.FLAG_RESUME;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A corpus of valid frames, one or more per frame type and flag combination, each with the {@link
 * Decoded} record that {@link FrameReader} must produce for it. Shared by the round-trip, malformed
 * input and fuzz tests, plus the byte helpers those tests use.
 */
final class FrameCases {
  static final String BINARY = "application/binary";
  static final String JSON = "application/json";
  static final int MAX_N = Integer.MAX_VALUE;

  /** Above {@link Frames#ZERO_COPY_THRESHOLD}: the frame becomes a composite. */
  static final int LARGE = Frames.ZERO_COPY_THRESHOLD + 904;

  private FrameCases() {}

  /** Encodes one frame from caller-owned inputs created through {@code in}. */
  interface Encoder {
    ByteBuf encode(Inputs in, int headroom);
  }

  record FrameCase(String name, Encoder encoder, Decoded expected) {
    @Override
    public String toString() {
      return name;
    }
  }

  /**
   * The metadata and data buffers a case passes to an encoder. They stay owned by the test: {@link
   * #assertStillOwnedThenRelease()} checks that the encoder did not take the caller's reference,
   * then releases them; once the frame is released too, the tracking allocator sees refCnt 0.
   */
  static final class Inputs {
    private final ByteBufAllocator alloc;
    private final List<ByteBuf> buffers = new ArrayList<>();

    Inputs(ByteBufAllocator alloc) {
      this.alloc = alloc;
    }

    ByteBufAllocator alloc() {
      return alloc;
    }

    ByteBuf utf8(String text) {
      return bytes(text.getBytes(StandardCharsets.UTF_8));
    }

    ByteBuf bytes(byte[] bytes) {
      ByteBuf buf = alloc.buffer(bytes.length).writeBytes(bytes);
      buffers.add(buf);
      return buf;
    }

    /** Checks that each input is still referenced (at least by the caller), then releases it. */
    void assertStillOwnedThenRelease() {
      for (ByteBuf buf : buffers) {
        assertThat(buf.refCnt()).as("refCnt of a caller's buffer").isPositive();
        buf.release();
      }
      buffers.clear();
    }
  }

  static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  static String hex(String utf8) {
    return hex(utf8(utf8));
  }

  static String hex(byte[] bytes) {
    return ByteBufUtil.hexDump(bytes);
  }

  /** {@code size} bytes of a recognizable, non-repeating-at-256 pattern. */
  static byte[] pattern(int size) {
    byte[] bytes = new byte[size];
    for (int i = 0; i < size; i++) {
      bytes[i] = (byte) (i * 31 + (i >>> 8));
    }
    return bytes;
  }

  /**
   * Encodes {@code c} with {@code headroom} and releases the caller's inputs at once, so the frame
   * must hold its own reference to anything it shares.
   */
  static ByteBuf encode(FrameCase c, ByteBufAllocator alloc, int headroom) {
    Inputs in = new Inputs(alloc);
    ByteBuf frame = c.encoder().encode(in, headroom);
    in.assertStillOwnedThenRelease();
    return frame;
  }

  /** The bytes of a case's frame without headroom; every buffer used is released. */
  static byte[] bytes(FrameCase c, ByteBufAllocator alloc) {
    ByteBuf frame = encode(c, alloc, 0);
    try {
      return ByteBufUtil.getBytes(frame);
    } finally {
      frame.release();
    }
  }

  static List<FrameCase> all() {
    List<FrameCase> cases = new ArrayList<>();
    setup(cases);
    lease(cases);
    keepAlive(cases);
    requests(cases);
    requestN(cases);
    cancel(cases);
    payload(cases);
    error(cases);
    metadataPush(cases);
    resume(cases);
    ext(cases);
    return cases;
  }

  private static void add(List<FrameCase> cases, String name, Encoder encoder, Decoded expected) {
    cases.add(new FrameCase(name, encoder, expected));
  }

  private static void setup(List<FrameCase> cases) {
    byte[] token = pattern(16);
    add(
        cases,
        "SETUP without lease, resume token or metadata",
        (in, h) ->
            SetupFrame.encode(
                in.alloc(), h, false, 30_000, 90_000, null, BINARY, BINARY, null, in.utf8("hi")),
        new Decoded.Setup(0, 1, 0, 30_000, 90_000, null, BINARY, BINARY, null, hex("hi")));
    add(
        cases,
        "SETUP with lease and metadata",
        (in, h) ->
            SetupFrame.encode(
                in.alloc(),
                h,
                true,
                1,
                Integer.MAX_VALUE,
                null,
                "message/x.rsocket.composite-metadata.v0",
                JSON,
                in.utf8("setup-meta"),
                in.utf8("{}")),
        new Decoded.Setup(
            FLAG_LEASE | FLAG_METADATA,
            1,
            0,
            1,
            Integer.MAX_VALUE,
            null,
            "message/x.rsocket.composite-metadata.v0",
            JSON,
            hex("setup-meta"),
            hex("{}")));
    add(
        cases,
        "SETUP with resume token, without lease or metadata",
        (in, h) ->
            SetupFrame.encode(
                in.alloc(), h, false, 500, 1_500, in.bytes(token), BINARY, JSON, null, null),
        new Decoded.Setup(FLAG_RESUME, 1, 0, 500, 1_500, hex(token), BINARY, JSON, null, ""));
    add(
        cases,
        "SETUP with lease, resume token and empty metadata",
        (in, h) ->
            SetupFrame.encode(
                in.alloc(),
                h,
                true,
                20_000,
                60_000,
                in.bytes(token),
                "",
                "text/plain",
                in.utf8(""),
                in.utf8("d")),
        new Decoded.Setup(
            FLAG_LEASE | FLAG_RESUME | FLAG_METADATA,
            1,
            0,
            20_000,
            60_000,
            hex(token),
            "",
            "text/plain",
            "",
            hex("d")));
    byte[] large = pattern(LARGE);
    add(
        cases,
        "SETUP with metadata and large data",
        (in, h) ->
            SetupFrame.encode(
                in.alloc(),
                h,
                false,
                30_000,
                90_000,
                null,
                BINARY,
                BINARY,
                in.utf8("m"),
                in.bytes(large)),
        new Decoded.Setup(
            FLAG_METADATA, 1, 0, 30_000, 90_000, null, BINARY, BINARY, hex("m"), hex(large)));
  }

  private static void lease(List<FrameCase> cases) {
    add(
        cases,
        "LEASE with metadata",
        (in, h) -> LeaseFrame.encode(in.alloc(), h, 60_000, 100, in.utf8("lease-meta")),
        new Decoded.Lease(60_000, 100, hex("lease-meta")));
    add(
        cases,
        "LEASE without metadata",
        (in, h) -> LeaseFrame.encode(in.alloc(), h, Integer.MAX_VALUE, 0, null),
        new Decoded.Lease(Integer.MAX_VALUE, 0, null));
    add(
        cases,
        "LEASE with empty metadata",
        (in, h) -> LeaseFrame.encode(in.alloc(), h, 1, 1, in.utf8("")),
        new Decoded.Lease(1, 1, ""));
  }

  private static void keepAlive(List<FrameCase> cases) {
    add(
        cases,
        "KEEPALIVE with respond and data",
        (in, h) -> KeepAliveFrame.encode(in.alloc(), h, true, 0, in.utf8("ping")),
        new Decoded.KeepAlive(true, 0, hex("ping")));
    add(
        cases,
        "KEEPALIVE answer with a position and no data",
        (in, h) -> KeepAliveFrame.encode(in.alloc(), h, false, (1L << 40) + 7, null),
        new Decoded.KeepAlive(false, (1L << 40) + 7, ""));
    add(
        cases,
        "KEEPALIVE with the largest position",
        (in, h) -> KeepAliveFrame.encode(in.alloc(), h, false, Long.MAX_VALUE, in.utf8("")),
        new Decoded.KeepAlive(false, Long.MAX_VALUE, ""));
  }

  private static void requests(List<FrameCase> cases) {
    int rr = FrameType.REQUEST_RESPONSE;
    add(
        cases,
        "REQUEST_RESPONSE with metadata and data",
        (in, h) ->
            RequestResponseFrame.encode(in.alloc(), h, 1, false, in.utf8("meta"), in.utf8("data")),
        new Decoded.Request(rr, 1, FLAG_METADATA, 0, hex("meta"), hex("data")));
    add(
        cases,
        "REQUEST_RESPONSE without metadata",
        (in, h) -> RequestResponseFrame.encode(in.alloc(), h, 3, false, null, in.utf8("data")),
        new Decoded.Request(rr, 3, 0, 0, null, hex("data")));
    add(
        cases,
        "REQUEST_RESPONSE with empty metadata and no data",
        (in, h) -> RequestResponseFrame.encode(in.alloc(), h, 5, false, in.utf8(""), null),
        new Decoded.Request(rr, 5, FLAG_METADATA, 0, "", ""));
    add(
        cases,
        "REQUEST_RESPONSE with follows",
        (in, h) ->
            RequestResponseFrame.encode(
                in.alloc(), h, Integer.MAX_VALUE, true, in.utf8("m"), in.utf8("first")),
        new Decoded.Request(
            rr, Integer.MAX_VALUE, FLAG_FOLLOWS | FLAG_METADATA, 0, hex("m"), hex("first")));
    byte[] threshold = pattern(Frames.ZERO_COPY_THRESHOLD);
    add(
        cases,
        "REQUEST_RESPONSE with data at the zero-copy threshold",
        (in, h) ->
            RequestResponseFrame.encode(
                in.alloc(), h, 7, false, in.utf8("meta"), in.bytes(threshold)),
        new Decoded.Request(rr, 7, FLAG_METADATA, 0, hex("meta"), hex(threshold)));

    int fnf = FrameType.REQUEST_FNF;
    add(
        cases,
        "REQUEST_FNF with metadata and data",
        (in, h) -> RequestFnfFrame.encode(in.alloc(), h, 2, false, in.utf8("m"), in.utf8("fire")),
        new Decoded.Request(fnf, 2, FLAG_METADATA, 0, hex("m"), hex("fire")));
    add(
        cases,
        "REQUEST_FNF with follows and no metadata",
        (in, h) -> RequestFnfFrame.encode(in.alloc(), h, 4, true, null, in.utf8("part")),
        new Decoded.Request(fnf, 4, FLAG_FOLLOWS, 0, null, hex("part")));

    int rs = FrameType.REQUEST_STREAM;
    add(
        cases,
        "REQUEST_STREAM with request-n 1",
        (in, h) -> RequestStreamFrame.encode(in.alloc(), h, 1, false, 1, null, in.utf8("s")),
        new Decoded.Request(rs, 1, 0, 1, null, hex("s")));
    add(
        cases,
        "REQUEST_STREAM with request-n 2^31-1 and metadata",
        (in, h) ->
            RequestStreamFrame.encode(
                in.alloc(), h, 3, false, MAX_N, in.utf8("route"), in.utf8("s")),
        new Decoded.Request(rs, 3, FLAG_METADATA, MAX_N, hex("route"), hex("s")));
    add(
        cases,
        "REQUEST_STREAM with request-n above 2^31-1",
        (in, h) ->
            RequestStreamFrame.encode(in.alloc(), h, 5, false, (1L << 31) + 5, null, in.utf8("")),
        new Decoded.Request(rs, 5, 0, MAX_N, null, ""));
    add(
        cases,
        "REQUEST_STREAM with follows",
        (in, h) ->
            RequestStreamFrame.encode(in.alloc(), h, 7, true, 16, in.utf8("m"), in.utf8("d")),
        new Decoded.Request(rs, 7, FLAG_FOLLOWS | FLAG_METADATA, 16, hex("m"), hex("d")));
    byte[] large = pattern(LARGE);
    add(
        cases,
        "REQUEST_STREAM with large data",
        (in, h) -> RequestStreamFrame.encode(in.alloc(), h, 9, false, 8, null, in.bytes(large)),
        new Decoded.Request(rs, 9, 0, 8, null, hex(large)));

    int rc = FrameType.REQUEST_CHANNEL;
    add(
        cases,
        "REQUEST_CHANNEL with complete",
        (in, h) ->
            RequestChannelFrame.encode(in.alloc(), h, 1, false, true, 1, null, in.utf8("only")),
        new Decoded.Request(rc, 1, FLAG_COMPLETE, 1, null, hex("only")));
    add(
        cases,
        "REQUEST_CHANNEL without complete, request-n above 2^31-1",
        (in, h) ->
            RequestChannelFrame.encode(
                in.alloc(), h, 3, false, false, Long.MAX_VALUE, in.utf8("m"), in.utf8("d")),
        new Decoded.Request(rc, 3, FLAG_METADATA, MAX_N, hex("m"), hex("d")));
    add(
        cases,
        "REQUEST_CHANNEL with follows",
        (in, h) ->
            RequestChannelFrame.encode(in.alloc(), h, 5, true, false, 2, null, in.utf8("part")),
        new Decoded.Request(rc, 5, FLAG_FOLLOWS, 2, null, hex("part")));
    add(
        cases,
        "REQUEST_CHANNEL with follows, complete and metadata",
        (in, h) ->
            RequestChannelFrame.encode(
                in.alloc(), h, 7, true, true, 3, in.utf8("m"), in.utf8("part")),
        new Decoded.Request(
            rc, 7, FLAG_FOLLOWS | FLAG_COMPLETE | FLAG_METADATA, 3, hex("m"), hex("part")));
  }

  private static void requestN(List<FrameCase> cases) {
    add(
        cases,
        "REQUEST_N with n 1",
        (in, h) -> RequestNFrame.encode(in.alloc(), h, 1, 1),
        new Decoded.RequestN(1, 1));
    add(
        cases,
        "REQUEST_N with n 2^31-1",
        (in, h) -> RequestNFrame.encode(in.alloc(), h, 2, MAX_N),
        new Decoded.RequestN(2, MAX_N));
    add(
        cases,
        "REQUEST_N with n above 2^31-1",
        (in, h) -> RequestNFrame.encode(in.alloc(), h, 3, 1L << 40),
        new Decoded.RequestN(3, MAX_N));
  }

  private static void cancel(List<FrameCase> cases) {
    add(cases, "CANCEL", (in, h) -> CancelFrame.encode(in.alloc(), h, 9), new Decoded.Cancel(9));
    add(
        cases,
        "CANCEL on the largest stream id",
        (in, h) -> CancelFrame.encode(in.alloc(), h, Integer.MAX_VALUE),
        new Decoded.Cancel(Integer.MAX_VALUE));
  }

  private static void payload(List<FrameCase> cases) {
    add(
        cases,
        "PAYLOAD with next",
        (in, h) -> PayloadFrame.encode(in.alloc(), h, 1, FLAG_NEXT, in.utf8("m"), in.utf8("e")),
        new Decoded.Payload(1, FLAG_NEXT | FLAG_METADATA, hex("m"), hex("e")));
    add(
        cases,
        "PAYLOAD with complete",
        (in, h) -> PayloadFrame.encode(in.alloc(), h, 2, FLAG_COMPLETE, null, null),
        new Decoded.Payload(2, FLAG_COMPLETE, null, ""));
    add(
        cases,
        "PAYLOAD complete shortcut",
        (in, h) -> PayloadFrame.encodeComplete(in.alloc(), h, 3),
        new Decoded.Payload(3, FLAG_COMPLETE, null, ""));
    add(
        cases,
        "PAYLOAD with next and complete",
        (in, h) ->
            PayloadFrame.encode(
                in.alloc(), h, 4, FLAG_NEXT | FLAG_COMPLETE, in.utf8(""), in.utf8("last")),
        new Decoded.Payload(4, FLAG_NEXT | FLAG_COMPLETE | FLAG_METADATA, "", hex("last")));
    add(
        cases,
        "PAYLOAD with follows",
        (in, h) -> PayloadFrame.encode(in.alloc(), h, 5, FLAG_FOLLOWS, null, in.utf8("frag")),
        new Decoded.Payload(5, FLAG_FOLLOWS, null, hex("frag")));
    add(
        cases,
        "PAYLOAD with follows and next",
        (in, h) ->
            PayloadFrame.encode(
                in.alloc(), h, 6, FLAG_FOLLOWS | FLAG_NEXT, in.utf8("m"), in.utf8("frag")),
        new Decoded.Payload(6, FLAG_FOLLOWS | FLAG_NEXT | FLAG_METADATA, hex("m"), hex("frag")));
    byte[] large = pattern(LARGE);
    add(
        cases,
        "PAYLOAD with large data",
        (in, h) -> PayloadFrame.encode(in.alloc(), h, 7, FLAG_NEXT, in.utf8("m"), in.bytes(large)),
        new Decoded.Payload(7, FLAG_NEXT | FLAG_METADATA, hex("m"), hex(large)));
  }

  private static void error(List<FrameCase> cases) {
    add(
        cases,
        "ERROR on stream 0",
        (in, h) -> ErrorFrame.encode(in.alloc(), h, 0, ErrorCode.CONNECTION_CLOSE, "bye"),
        new Decoded.Error(0, ErrorCode.CONNECTION_CLOSE, "bye"));
    String text = "h\u00e9llo \u2013 \u65e5\u672c \ud83d\ude80";
    add(
        cases,
        "ERROR with a UTF-8 message",
        (in, h) -> ErrorFrame.encode(in.alloc(), h, 5, ErrorCode.APPLICATION_ERROR, text),
        new Decoded.Error(5, ErrorCode.APPLICATION_ERROR, text));
    add(
        cases,
        "ERROR with a null message",
        (in, h) -> ErrorFrame.encode(in.alloc(), h, 7, ErrorCode.MIN_USER_ALLOWED, null),
        new Decoded.Error(7, ErrorCode.MIN_USER_ALLOWED, ""));
    add(
        cases,
        "ERROR with the largest application code",
        (in, h) -> ErrorFrame.encode(in.alloc(), h, 9, ErrorCode.MAX_USER_ALLOWED, "x"),
        new Decoded.Error(9, ErrorCode.MAX_USER_ALLOWED, "x"));
  }

  private static void metadataPush(List<FrameCase> cases) {
    add(
        cases,
        "METADATA_PUSH",
        (in, h) -> MetadataPushFrame.encode(in.alloc(), h, in.utf8("pushed")),
        new Decoded.MetadataPush(hex("pushed")));
    add(
        cases,
        "METADATA_PUSH with empty metadata",
        (in, h) -> MetadataPushFrame.encode(in.alloc(), h, in.utf8("")),
        new Decoded.MetadataPush(""));
  }

  private static void resume(List<FrameCase> cases) {
    byte[] token = pattern(16);
    add(
        cases,
        "RESUME",
        (in, h) -> ResumeFrame.encode(in.alloc(), h, in.bytes(token), 1234, 5678),
        new Decoded.Resume(1, 0, hex(token), 1234, 5678));
    add(
        cases,
        "RESUME with an empty token and the largest positions",
        (in, h) -> ResumeFrame.encode(in.alloc(), h, in.utf8(""), Long.MAX_VALUE, Long.MAX_VALUE),
        new Decoded.Resume(1, 0, "", Long.MAX_VALUE, Long.MAX_VALUE));
    add(
        cases,
        "RESUME_OK",
        (in, h) -> ResumeOkFrame.encode(in.alloc(), h, 42),
        new Decoded.ResumeOk(42));
    add(
        cases,
        "RESUME_OK with the largest position",
        (in, h) -> ResumeOkFrame.encode(in.alloc(), h, Long.MAX_VALUE),
        new Decoded.ResumeOk(Long.MAX_VALUE));
  }

  private static void ext(List<FrameCase> cases) {
    add(
        cases,
        "EXT with ignore, metadata and data on stream 0",
        (in, h) -> ExtFrame.encode(in.alloc(), h, 0, true, 1, in.utf8("m"), in.utf8("d")),
        new Decoded.Ext(0, FLAG_IGNORE | FLAG_METADATA, 1, hex("m"), hex("d")));
    add(
        cases,
        "EXT without ignore or metadata on a stream",
        (in, h) ->
            ExtFrame.encode(in.alloc(), h, 3, false, Integer.MAX_VALUE, null, in.utf8("ext")),
        new Decoded.Ext(3, 0, Integer.MAX_VALUE, null, hex("ext")));
    byte[] large = pattern(LARGE);
    add(
        cases,
        "EXT with large data",
        (in, h) -> ExtFrame.encode(in.alloc(), h, 5, true, 7, in.utf8(""), in.bytes(large)),
        new Decoded.Ext(5, FLAG_IGNORE | FLAG_METADATA, 7, "", hex(large)));
  }
}

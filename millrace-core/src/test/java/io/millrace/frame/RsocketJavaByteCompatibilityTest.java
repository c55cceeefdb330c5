package io.millrace.frame;

import static io.millrace.frame.FrameCases.BINARY;
import static io.millrace.frame.FrameCases.JSON;
import static io.millrace.frame.FrameCases.MAX_N;
import static io.millrace.frame.FrameCases.pattern;
import static io.millrace.frame.FrameCases.utf8;
import static io.millrace.frame.FrameHeader.FLAG_COMPLETE;
import static io.millrace.frame.FrameHeader.FLAG_FOLLOWS;
import static io.millrace.frame.FrameHeader.FLAG_IGNORE;
import static io.millrace.frame.FrameHeader.FLAG_NEXT;
import static io.millrace.frame.FrameHeader.FLAG_RESUME;
import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.testing.TrackingAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.rsocket.Payload;
import io.rsocket.RSocketErrorException;
import io.rsocket.frame.CancelFrameCodec;
import io.rsocket.frame.ErrorFrameCodec;
import io.rsocket.frame.ExtensionFrameCodec;
import io.rsocket.frame.KeepAliveFrameCodec;
import io.rsocket.frame.LeaseFrameCodec;
import io.rsocket.frame.MetadataPushFrameCodec;
import io.rsocket.frame.PayloadFrameCodec;
import io.rsocket.frame.RequestChannelFrameCodec;
import io.rsocket.frame.RequestFireAndForgetFrameCodec;
import io.rsocket.frame.RequestNFrameCodec;
import io.rsocket.frame.RequestResponseFrameCodec;
import io.rsocket.frame.RequestStreamFrameCodec;
import io.rsocket.frame.ResumeFrameCodec;
import io.rsocket.frame.ResumeOkFrameCodec;
import io.rsocket.frame.SetupFrameCodec;
import io.rsocket.util.DefaultPayload;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The same frames encoded by Millrace and by rsocket-java 1.1.5 must be the same bytes, and
 * Millrace's reader must decode rsocket-java's frames (composites of up to three components).
 *
 * <p>Ownership in rsocket-java 1.1.5, read from its code: the request, PAYLOAD, KEEPALIVE, LEASE,
 * METADATA_PUSH and EXT codecs take ownership of the metadata and data buffers passed in (they
 * become components of the returned composite, or are released at once when empty); SETUP slices
 * the {@link Payload} without retaining it, so the frame owns the payload's buffers; RESUME copies
 * the token and leaves it to the caller; ERROR allocates its own message buffer. So rsocket-java
 * always gets fresh buffers from {@link #handedOver}, which nobody else releases: the tracking
 * allocator proves rsocket-java released them with its frame. Millrace gets caller-owned buffers
 * from {@link #ours}, released after each test.
 */
class RsocketJavaByteCompatibilityTest {
  private final TrackingAllocator alloc = new TrackingAllocator();
  private final List<ByteBuf> callerOwned = new ArrayList<>();

  @AfterEach
  void everyBufferReleased() {
    for (ByteBuf buf : callerOwned) {
      assertThat(buf.refCnt()).as("Millrace left the caller's buffer to the caller").isEqualTo(1);
      buf.release();
    }
    alloc.assertAllReleased();
  }

  private ByteBuf ours(byte[] bytes) {
    ByteBuf buf = alloc.copyOf(bytes);
    callerOwned.add(buf);
    return buf;
  }

  private ByteBuf ours(String text) {
    return ours(utf8(text));
  }

  /** A buffer given to rsocket-java, which takes ownership of it. */
  private ByteBuf handedOver(byte[] bytes) {
    return alloc.copyOf(bytes);
  }

  private ByteBuf handedOver(String text) {
    return handedOver(utf8(text));
  }

  /** Asserts identical bytes, then that both decode to the same fields; releases both frames. */
  private static void assertSameFrame(ByteBuf millrace, ByteBuf rsocket) {
    try {
      assertThat(ByteBufUtil.hexDump(millrace))
          .as("Millrace bytes (actual) vs rsocket-java 1.1.5 bytes (expected)")
          .isEqualTo(ByteBufUtil.hexDump(rsocket));
      assertThat(RecordingListener.decode(rsocket))
          .as("rsocket-java frame decoded by Millrace")
          .isEqualTo(RecordingListener.decode(millrace));
    } finally {
      millrace.release();
      rsocket.release();
    }
  }

  private static Payload payload(String data, String metadata) {
    return DefaultPayload.create(utf8(data), metadata == null ? null : utf8(metadata));
  }

  @Test
  void setup_withoutLeaseTokenOrMetadata_sameBytesAsRsocketJava() {
    assertSameFrame(
        SetupFrame.encode(alloc, 0, false, 30_000, 90_000, null, BINARY, BINARY, null, ours("hi")),
        SetupFrameCodec.encode(alloc, false, 30_000, 90_000, BINARY, BINARY, payload("hi", null)));
  }

  @Test
  void setup_withLeaseResumeTokenAndMetadata_sameBytesAsRsocketJava() {
    byte[] token = pattern(16);
    ByteBuf theirToken = alloc.copyOf(token); // copied by rsocket-java, released here
    try {
      assertSameFrame(
          SetupFrame.encode(
              alloc,
              0,
              true,
              1_000,
              Integer.MAX_VALUE,
              ours(token),
              "message/x.rsocket.composite-metadata.v0",
              JSON,
              ours("meta"),
              ours("{}")),
          SetupFrameCodec.encode(
              alloc,
              true,
              1_000,
              Integer.MAX_VALUE,
              theirToken,
              "message/x.rsocket.composite-metadata.v0",
              JSON,
              payload("{}", "meta")));
      assertThat(theirToken.readerIndex()).isZero();
    } finally {
      theirToken.release();
    }
  }

  @Test
  void setup_withEmptyMetadataAndNoData_sameBytesAsRsocketJava() {
    assertSameFrame(
        SetupFrame.encode(alloc, 0, true, 5, 10, null, "", "text/plain", ours(""), null),
        SetupFrameCodec.encode(alloc, true, 5, 10, "", "text/plain", payload("", "")));
  }

  @Test
  void setup_withLargeData_sameBytesAsRsocketJava() {
    byte[] large = pattern(FrameCases.LARGE);
    assertSameFrame(
        SetupFrame.encode(
            alloc, 0, false, 30_000, 90_000, null, BINARY, BINARY, ours("m"), ours(large)),
        SetupFrameCodec.encode(
            alloc, false, 30_000, 90_000, BINARY, BINARY, DefaultPayload.create(large, utf8("m"))));
  }

  /**
   * Difference, not a Millrace bug: rsocket-java treats an empty resume token as "no resume" and
   * clears R; Millrace's API means "no resume" by a null token and writes whatever token it is
   * given, so an empty one becomes R with token length 0. The spec ties only the presence of the
   * token fields to R and sets no minimum length, so both frames are valid; a null token gives
   * rsocket-java's bytes exactly.
   */
  @Test
  void setup_emptyResumeToken_millraceSetsResumeFlagWhereRsocketJavaDoesNot() {
    ByteBuf millraceNull =
        SetupFrame.encode(alloc, 0, false, 1, 2, null, BINARY, BINARY, null, null);
    ByteBuf rsocketEmpty =
        SetupFrameCodec.encode(
            alloc, false, 1, 2, Unpooled.EMPTY_BUFFER, BINARY, BINARY, payload("", null));
    assertSameFrame(millraceNull, rsocketEmpty);

    ByteBuf millraceEmpty =
        SetupFrame.encode(alloc, 0, false, 1, 2, ours(""), BINARY, BINARY, null, null);
    try {
      assertThat(FrameHeader.flags(millraceEmpty)).isEqualTo(FLAG_RESUME);
      assertThat(RecordingListener.decode(millraceEmpty))
          .isEqualTo(new Decoded.Setup(FLAG_RESUME, 1, 0, 1, 2, "", BINARY, BINARY, null, ""));
    } finally {
      millraceEmpty.release();
    }
  }

  @Test
  void lease_withAndWithoutMetadata_sameBytesAsRsocketJava() {
    assertSameFrame(
        LeaseFrame.encode(alloc, 0, 60_000, 100, ours("lease")),
        LeaseFrameCodec.encode(alloc, 60_000, 100, handedOver("lease")));
    assertSameFrame(
        LeaseFrame.encode(alloc, 0, Integer.MAX_VALUE, 0, null),
        LeaseFrameCodec.encode(alloc, Integer.MAX_VALUE, 0, null));
    assertSameFrame(
        LeaseFrame.encode(alloc, 0, 1, 1, ours("")),
        LeaseFrameCodec.encode(alloc, 1, 1, handedOver("")));
  }

  @Test
  void keepAlive_respondAndPositions_sameBytesAsRsocketJava() {
    assertSameFrame(
        KeepAliveFrame.encode(alloc, 0, true, 0, ours("ping")),
        KeepAliveFrameCodec.encode(alloc, true, 0, handedOver("ping")));
    assertSameFrame(
        KeepAliveFrame.encode(alloc, 0, false, (1L << 40) + 7, ours("")),
        KeepAliveFrameCodec.encode(alloc, false, (1L << 40) + 7, handedOver("")));
    assertSameFrame(
        KeepAliveFrame.encode(alloc, 0, false, Long.MAX_VALUE, null),
        KeepAliveFrameCodec.encode(alloc, false, Long.MAX_VALUE, null));
  }

  @Test
  void requestResponse_metadataVariantsAndFollows_sameBytesAsRsocketJava() {
    assertSameFrame(
        RequestResponseFrame.encode(alloc, 0, 1, false, ours("meta"), ours("data")),
        RequestResponseFrameCodec.encode(alloc, 1, false, handedOver("meta"), handedOver("data")));
    assertSameFrame(
        RequestResponseFrame.encode(alloc, 0, 3, false, null, ours("data")),
        RequestResponseFrameCodec.encode(alloc, 3, false, null, handedOver("data")));
    assertSameFrame(
        RequestResponseFrame.encode(alloc, 0, 5, false, ours(""), ours("")),
        RequestResponseFrameCodec.encode(alloc, 5, false, handedOver(""), handedOver("")));
    assertSameFrame(
        RequestResponseFrame.encode(alloc, 0, Integer.MAX_VALUE, true, ours("m"), ours("first")),
        RequestResponseFrameCodec.encode(
            alloc, Integer.MAX_VALUE, true, handedOver("m"), handedOver("first")));
    byte[] large = pattern(FrameCases.LARGE);
    assertSameFrame(
        RequestResponseFrame.encode(alloc, 0, 7, false, ours("m"), ours(large)),
        RequestResponseFrameCodec.encode(alloc, 7, false, handedOver("m"), handedOver(large)));
  }

  @Test
  void requestFnf_metadataVariantsAndFollows_sameBytesAsRsocketJava() {
    assertSameFrame(
        RequestFnfFrame.encode(alloc, 0, 2, false, ours("m"), ours("fire")),
        RequestFireAndForgetFrameCodec.encode(
            alloc, 2, false, handedOver("m"), handedOver("fire")));
    assertSameFrame(
        RequestFnfFrame.encode(alloc, 0, 4, true, null, ours("part")),
        RequestFireAndForgetFrameCodec.encode(alloc, 4, true, null, handedOver("part")));
  }

  @Test
  void requestStream_requestNValuesAndFollows_sameBytesAsRsocketJava() {
    assertSameFrame(
        RequestStreamFrame.encode(alloc, 0, 1, false, 1, null, ours("s")),
        RequestStreamFrameCodec.encode(alloc, 1, false, 1, null, handedOver("s")));
    assertSameFrame(
        RequestStreamFrame.encode(alloc, 0, 3, false, MAX_N, ours("route"), ours("s")),
        RequestStreamFrameCodec.encode(
            alloc, 3, false, MAX_N, handedOver("route"), handedOver("s")));
    assertSameFrame(
        RequestStreamFrame.encode(alloc, 0, 5, false, (1L << 31) + 5, null, null),
        RequestStreamFrameCodec.encode(alloc, 5, false, (1L << 31) + 5, null, null));
    assertSameFrame(
        RequestStreamFrame.encode(alloc, 0, 7, true, 16, ours("m"), ours("d")),
        RequestStreamFrameCodec.encode(alloc, 7, true, 16, handedOver("m"), handedOver("d")));
  }

  @Test
  void requestChannel_completeFollowsAndRequestN_sameBytesAsRsocketJava() {
    assertSameFrame(
        RequestChannelFrame.encode(alloc, 0, 1, false, true, 1, null, ours("only")),
        RequestChannelFrameCodec.encode(alloc, 1, false, true, 1, null, handedOver("only")));
    assertSameFrame(
        RequestChannelFrame.encode(alloc, 0, 3, false, false, Long.MAX_VALUE, ours("m"), ours("d")),
        RequestChannelFrameCodec.encode(
            alloc, 3, false, false, Long.MAX_VALUE, handedOver("m"), handedOver("d")));
    assertSameFrame(
        RequestChannelFrame.encode(alloc, 0, 5, true, true, 3, ours("m"), ours("part")),
        RequestChannelFrameCodec.encode(
            alloc, 5, true, true, 3, handedOver("m"), handedOver("part")));
  }

  @Test
  void requestN_boundaryValues_sameBytesAsRsocketJava() {
    for (long n : new long[] {1, 2, MAX_N, (long) MAX_N + 1, Long.MAX_VALUE}) {
      assertSameFrame(RequestNFrame.encode(alloc, 0, 7, n), RequestNFrameCodec.encode(alloc, 7, n));
    }
  }

  @Test
  void cancel_sameBytesAsRsocketJava() {
    assertSameFrame(CancelFrame.encode(alloc, 0, 9), CancelFrameCodec.encode(alloc, 9));
    assertSameFrame(
        CancelFrame.encode(alloc, 0, Integer.MAX_VALUE),
        CancelFrameCodec.encode(alloc, Integer.MAX_VALUE));
  }

  @Test
  void payload_eachFlagCombination_sameBytesAsRsocketJava() {
    int[] flagSets = {
      FLAG_NEXT, FLAG_COMPLETE, FLAG_NEXT | FLAG_COMPLETE, FLAG_FOLLOWS, FLAG_FOLLOWS | FLAG_NEXT
    };
    for (int flags : flagSets) {
      boolean follows = (flags & FLAG_FOLLOWS) != 0;
      boolean complete = (flags & FLAG_COMPLETE) != 0;
      boolean next = (flags & FLAG_NEXT) != 0;
      assertSameFrame(
          PayloadFrame.encode(alloc, 0, 11, flags, ours("m"), ours("d")),
          PayloadFrameCodec.encode(
              alloc, 11, follows, complete, next, handedOver("m"), handedOver("d")));
      assertSameFrame(
          PayloadFrame.encode(alloc, 0, 13, flags, null, ours("d")),
          PayloadFrameCodec.encode(alloc, 13, follows, complete, next, null, handedOver("d")));
    }
  }

  @Test
  void payload_completeShortcutAndLargeData_sameBytesAsRsocketJava() {
    assertSameFrame(
        PayloadFrame.encodeComplete(alloc, 0, 3), PayloadFrameCodec.encodeComplete(alloc, 3));
    assertSameFrame(
        PayloadFrame.encode(alloc, 0, 3, FLAG_COMPLETE, null, null),
        PayloadFrameCodec.encode(alloc, 3, false, true, false, null, null));
    byte[] large = pattern(FrameCases.LARGE);
    assertSameFrame(
        PayloadFrame.encode(alloc, 0, 5, FLAG_NEXT, ours("meta"), ours(large)),
        PayloadFrameCodec.encode(
            alloc, 5, false, false, true, handedOver("meta"), handedOver(large)));
  }

  @Test
  void error_codesAndUtf8Messages_sameBytesAsRsocketJava() {
    String text = "h\u00e9llo \u2013 \u65e5\u672c \ud83d\ude80";
    assertSameFrame(
        ErrorFrame.encode(alloc, 0, 0, ErrorCode.CONNECTION_CLOSE, "bye"),
        ErrorFrameCodec.encode(
            alloc, 0, new RSocketErrorException(ErrorCode.CONNECTION_CLOSE, "bye")));
    assertSameFrame(
        ErrorFrame.encode(alloc, 0, 0, ErrorCode.INVALID_SETUP, "bad setup"),
        ErrorFrameCodec.encode(
            alloc, 0, new RSocketErrorException(ErrorCode.INVALID_SETUP, "bad setup")));
    assertSameFrame(
        ErrorFrame.encode(alloc, 0, 5, ErrorCode.APPLICATION_ERROR, text),
        ErrorFrameCodec.encode(alloc, 5, new IllegalStateException(text)));
    assertSameFrame(
        ErrorFrame.encode(alloc, 0, 7, ErrorCode.MIN_USER_ALLOWED, null),
        ErrorFrameCodec.encode(
            alloc, 7, new RSocketErrorException(ErrorCode.MIN_USER_ALLOWED, null)));
    assertSameFrame(
        ErrorFrame.encode(alloc, 0, 9, ErrorCode.MAX_USER_ALLOWED, "x"),
        ErrorFrameCodec.encode(
            alloc, 9, new RSocketErrorException(ErrorCode.MAX_USER_ALLOWED, "x")));
  }

  @Test
  void metadataPush_sameBytesAsRsocketJava() {
    assertSameFrame(
        MetadataPushFrame.encode(alloc, 0, ours("pushed")),
        MetadataPushFrameCodec.encode(alloc, handedOver("pushed")));
    assertSameFrame(
        MetadataPushFrame.encode(alloc, 0, ours("")),
        MetadataPushFrameCodec.encode(alloc, handedOver("")));
  }

  @Test
  void resume_sameBytesAsRsocketJava() {
    byte[] token = pattern(16);
    ByteBuf theirToken = alloc.copyOf(token); // copied by rsocket-java, released here
    try {
      assertSameFrame(
          ResumeFrame.encode(alloc, 0, ours(token), 1234, 5678),
          ResumeFrameCodec.encode(alloc, theirToken, 1234, 5678));
      assertSameFrame(
          ResumeFrame.encode(alloc, 0, ours(token), Long.MAX_VALUE, 0),
          ResumeFrameCodec.encode(alloc, theirToken, Long.MAX_VALUE, 0));
    } finally {
      theirToken.release();
    }
  }

  @Test
  void resumeOk_sameBytesAsRsocketJava() {
    assertSameFrame(ResumeOkFrame.encode(alloc, 0, 42), ResumeOkFrameCodec.encode(alloc, 42));
    assertSameFrame(
        ResumeOkFrame.encode(alloc, 0, Long.MAX_VALUE),
        ResumeOkFrameCodec.encode(alloc, Long.MAX_VALUE));
  }

  @Test
  void ext_withIgnoreFlag_sameBytesAsRsocketJava() {
    assertSameFrame(
        ExtFrame.encode(alloc, 0, 0, true, 1, ours("m"), ours("d")),
        ExtensionFrameCodec.encode(alloc, 0, 1, handedOver("m"), handedOver("d")));
    assertSameFrame(
        ExtFrame.encode(alloc, 0, 3, true, Integer.MAX_VALUE, null, ours("ext")),
        ExtensionFrameCodec.encode(alloc, 3, Integer.MAX_VALUE, null, handedOver("ext")));
    byte[] large = pattern(FrameCases.LARGE);
    assertSameFrame(
        ExtFrame.encode(alloc, 0, 5, true, 7, ours(""), ours(large)),
        ExtensionFrameCodec.encode(alloc, 5, 7, handedOver(""), handedOver(large)));
  }

  /**
   * Difference, not a Millrace bug: rsocket-java's ExtensionFrameCodec always sets I (0x200).
   * Millrace lets the sender choose; the spec makes I optional on EXT ("ignore if not understood"),
   * so without it the frame differs from rsocket-java's in that bit only.
   */
  @Test
  void ext_withoutIgnoreFlag_differsFromRsocketJavaOnlyInIgnoreBit() {
    ByteBuf millrace = ExtFrame.encode(alloc, 0, 3, false, 9, null, ours("ext"));
    ByteBuf rsocket = ExtensionFrameCodec.encode(alloc, 3, 9, null, handedOver("ext"));
    try {
      assertThat(FrameHeader.flags(millrace)).isZero();
      assertThat(FrameHeader.flags(rsocket)).isEqualTo(FLAG_IGNORE);
      rsocket.setShort(4, rsocket.getShort(4) & ~FLAG_IGNORE);
      assertThat(ByteBufUtil.hexDump(millrace)).isEqualTo(ByteBufUtil.hexDump(rsocket));
    } finally {
      millrace.release();
      rsocket.release();
    }
  }
}

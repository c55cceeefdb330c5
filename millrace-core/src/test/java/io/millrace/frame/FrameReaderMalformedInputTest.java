package io.millrace.frame;

import static io.millrace.frame.FrameCases.BINARY;
import static io.millrace.frame.FrameCases.pattern;
import static io.millrace.frame.FrameCases.utf8;
import static io.millrace.frame.FrameHeader.FLAG_IGNORE;
import static io.millrace.frame.FrameHeader.FLAG_METADATA;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.millrace.frame.FrameCases.FrameCase;
import io.millrace.testing.TrackingAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.function.BiFunction;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Malformed frames make {@link FrameReader} throw {@link FrameFormatException}, never an {@link
 * IndexOutOfBoundsException}, and never reach the listener.
 *
 * <p>Every frame under test sits in a buffer whose capacity ends exactly where the frame ends and
 * whose reader index is not 0, so a read past the frame or an offset taken from the buffer start
 * instead of the reader index shows up as a wrong exception.
 */
class FrameReaderMalformedInputTest {
  private static final int PREFIX = 2;

  private final TrackingAllocator alloc = new TrackingAllocator();

  @AfterEach
  void everyBufferReleased() {
    alloc.assertAllReleased();
  }

  /** {@code bytes} after {@link #PREFIX} junk bytes, in a buffer of exactly that capacity. */
  private ByteBuf exact(byte[] bytes) {
    ByteBuf buf = alloc.heapBuffer(PREFIX + bytes.length, PREFIX + bytes.length);
    buf.writeZero(PREFIX).setByte(0, 0xEE).setByte(1, 0xEE);
    buf.writeBytes(bytes).readerIndex(PREFIX);
    return buf;
  }

  private byte[] bytes(ByteBuf frame) {
    try {
      return ByteBufUtil.getBytes(frame);
    } finally {
      frame.release();
    }
  }

  private AbstractThrowableAssert<?, ? extends Throwable> assertRejected(byte[] bytes) {
    ByteBuf frame = exact(bytes);
    RecordingListener listener = new RecordingListener();
    try {
      AbstractThrowableAssert<?, ? extends Throwable> thrown =
          assertThatThrownBy(() -> FrameReader.read(frame, listener))
              .as("reading %s", ByteBufUtil.hexDump(bytes))
              .isExactlyInstanceOf(FrameFormatException.class);
      assertThat(listener.events()).as("listener calls").isEmpty();
      return thrown;
    } finally {
      frame.release();
    }
  }

  private boolean read(byte[] bytes, RecordingListener listener) {
    ByteBuf frame = exact(bytes);
    try {
      return FrameReader.read(frame, listener);
    } finally {
      frame.release();
    }
  }

  private static byte[] withStreamId(byte[] frame, int streamId) {
    byte[] copy = frame.clone();
    copy[0] = (byte) (streamId >>> 24);
    copy[1] = (byte) (streamId >>> 16);
    copy[2] = (byte) (streamId >>> 8);
    copy[3] = (byte) streamId;
    return copy;
  }

  private static byte[] withInt(byte[] frame, int offset, int value) {
    byte[] copy = frame.clone();
    for (int i = 0; i < 4; i++) {
      copy[offset + i] = (byte) (value >>> (24 - 8 * i));
    }
    return copy;
  }

  /** A header-only frame of the given type and flags on stream 1, plus {@code bodyLength} zeros. */
  private static byte[] rawFrame(int type, int flags, int bodyLength) {
    byte[] frame = new byte[FrameHeader.SIZE + bodyLength];
    frame[3] = 1;
    int typeAndFlags = type << 10 | flags;
    frame[4] = (byte) (typeAndFlags >>> 8);
    frame[5] = (byte) typeAndFlags;
    return frame;
  }

  // ---------------------------------------------------------------------------------- truncation

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 2, 3, 4, 5})
  void read_shorterThanHeader_throws(int length) {
    byte[] cancel = bytes(CancelFrame.encode(alloc, 0, 1));
    assertRejected(Arrays.copyOf(cancel, length)).hasMessageContaining("header");
  }

  static List<FrameCase> cases() {
    return FrameCases.all();
  }

  /**
   * Bytes at the end of a case's frame that may be cut off and still leave a valid frame: the data
   * (or for LEASE and METADATA_PUSH the unprefixed metadata, for ERROR the message).
   */
  private static int trailingBytes(Decoded decoded) {
    if (decoded instanceof Decoded.Setup setup) {
      return setup.data().length() / 2;
    } else if (decoded instanceof Decoded.Request request) {
      return request.data().length() / 2;
    } else if (decoded instanceof Decoded.Payload payload) {
      return payload.data().length() / 2;
    } else if (decoded instanceof Decoded.Ext ext) {
      return ext.data().length() / 2;
    } else if (decoded instanceof Decoded.KeepAlive keepAlive) {
      return keepAlive.data().length() / 2;
    } else if (decoded instanceof Decoded.Lease lease) {
      return lease.metadata() == null ? 0 : lease.metadata().length() / 2;
    } else if (decoded instanceof Decoded.MetadataPush push) {
      return push.metadata().length() / 2;
    } else if (decoded instanceof Decoded.Error error) {
      return error.message().getBytes(StandardCharsets.UTF_8).length;
    }
    return 0;
  }

  /**
   * Cutting a valid frame anywhere before its trailing data (inside the header, a fixed field, a
   * SETUP token or MIME length or MIME type, a metadata length or the metadata) is malformed;
   * cutting only data off leaves a valid frame.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void read_frameTruncatedBeforeItsData_throws(FrameCase c) {
    byte[] frame = FrameCases.bytes(c, alloc);
    int minimum = frame.length - trailingBytes(c.expected());
    for (int length = 0; length < minimum; length++) {
      assertRejected(Arrays.copyOf(frame, length));
    }
    for (int length : new int[] {minimum, minimum + 1, frame.length - 1}) {
      if (length >= minimum && length < frame.length) {
        RecordingListener listener = new RecordingListener();
        assertThat(read(Arrays.copyOf(frame, length), listener)).isTrue();
        assertThat(listener.events()).hasSize(1);
      }
    }
  }

  // -------------------------------------------------------------------------- overrunning lengths

  static Stream<Arguments> framesWithMetadata() {
    BiFunction<ByteBufAllocator, ByteBuf[], ByteBuf> rr =
        (a, md) -> RequestResponseFrame.encode(a, 0, 1, false, md[0], md[1]);
    BiFunction<ByteBufAllocator, ByteBuf[], ByteBuf> fnf =
        (a, md) -> RequestFnfFrame.encode(a, 0, 1, false, md[0], md[1]);
    BiFunction<ByteBufAllocator, ByteBuf[], ByteBuf> stream =
        (a, md) -> RequestStreamFrame.encode(a, 0, 1, false, 1, md[0], md[1]);
    BiFunction<ByteBufAllocator, ByteBuf[], ByteBuf> channel =
        (a, md) -> RequestChannelFrame.encode(a, 0, 1, false, false, 1, md[0], md[1]);
    BiFunction<ByteBufAllocator, ByteBuf[], ByteBuf> payload =
        (a, md) -> PayloadFrame.encode(a, 0, 1, FrameHeader.FLAG_NEXT, md[0], md[1]);
    BiFunction<ByteBufAllocator, ByteBuf[], ByteBuf> ext =
        (a, md) -> ExtFrame.encode(a, 0, 1, false, 1, md[0], md[1]);
    BiFunction<ByteBufAllocator, ByteBuf[], ByteBuf> setup =
        (a, md) -> SetupFrame.encode(a, 0, true, 1, 2, md[1], BINARY, BINARY, md[0], md[1]);
    return Stream.of(
        Arguments.of("REQUEST_RESPONSE", rr),
        Arguments.of("REQUEST_FNF", fnf),
        Arguments.of("REQUEST_STREAM", stream),
        Arguments.of("REQUEST_CHANNEL", channel),
        Arguments.of("PAYLOAD", payload),
        Arguments.of("EXT", ext),
        Arguments.of("SETUP", setup));
  }

  /**
   * The frame with metadata "meta" and data "data": the u24 length sits 3+4+4 bytes from the end.
   */
  private byte[] withMetadata(BiFunction<ByteBufAllocator, ByteBuf[], ByteBuf> encoder) {
    ByteBuf metadata = alloc.copyOf(utf8("meta"));
    ByteBuf data = alloc.copyOf(utf8("data"));
    try {
      return bytes(encoder.apply(alloc, new ByteBuf[] {metadata, data}));
    } finally {
      metadata.release();
      data.release();
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("framesWithMetadata")
  void read_metadataLengthOverrunsFrame_throws(
      String type, BiFunction<ByteBufAllocator, ByteBuf[], ByteBuf> encoder) {
    byte[] frame = withMetadata(encoder);
    int lengthOffset = frame.length - 11;
    assertThat(frame[lengthOffset + 2]).as("metadata length field").isEqualTo((byte) 4);
    for (int length : new int[] {9, 0x100, 0xFF_FFFF}) {
      byte[] bad = frame.clone();
      bad[lengthOffset] = (byte) (length >>> 16);
      bad[lengthOffset + 1] = (byte) (length >>> 8);
      bad[lengthOffset + 2] = (byte) length;
      assertRejected(bad).hasMessageContaining(type);
    }
    byte[] fits = frame.clone();
    fits[lengthOffset + 2] = 8; // metadata swallows the data: still inside the frame
    RecordingListener listener = new RecordingListener();
    assertThat(read(fits, listener)).isTrue();
  }

  @Test
  void read_setupLengthFieldsOverrunFrame_throws() {
    byte[] token = pattern(4);
    ByteBuf tokenBuf = alloc.copyOf(token);
    byte[] setup =
        bytes(SetupFrame.encode(alloc, 0, false, 1, 2, tokenBuf, "ab", "cd", null, null));
    tokenBuf.release();
    int tokenLength = SetupFrame.VARIABLE_OFFSET;
    int metadataMimeLength = tokenLength + 2 + token.length;
    int dataMimeLength = metadataMimeLength + 1 + 2;
    assertThat(setup).hasSize(dataMimeLength + 1 + 2);

    byte[] longToken = setup.clone();
    longToken[tokenLength] = (byte) 0xFF;
    assertRejected(longToken);
    byte[] longMetadataMime = setup.clone();
    longMetadataMime[metadataMimeLength] = (byte) 0xFF;
    assertRejected(longMetadataMime);
    byte[] longDataMime = setup.clone();
    longDataMime[dataMimeLength] = 3;
    assertRejected(longDataMime);
  }

  @Test
  void read_resumeTokenLengthOverrunsFrame_throws() {
    ByteBuf token = alloc.copyOf(pattern(8));
    byte[] resume = bytes(ResumeFrame.encode(alloc, 0, token, 1, 2));
    token.release();
    int tokenLength = ResumeFrame.TOKEN_LENGTH_OFFSET;
    for (int length : new int[] {9, 24, 0xFFFF}) {
      byte[] bad = resume.clone();
      bad[tokenLength] = (byte) (length >>> 8);
      bad[tokenLength + 1] = (byte) length;
      assertRejected(bad).hasMessageContaining("RESUME");
    }
  }

  // ------------------------------------------------------------------------------- stream ids

  static Stream<Arguments> streamFrames() {
    return Stream.of(
        Arguments.of(
            "REQUEST_RESPONSE", (Enc) a -> RequestResponseFrame.encode(a, 0, 0, false, null, null)),
        Arguments.of("REQUEST_FNF", (Enc) a -> RequestFnfFrame.encode(a, 0, 0, false, null, null)),
        Arguments.of(
            "REQUEST_STREAM", (Enc) a -> RequestStreamFrame.encode(a, 0, 0, false, 1, null, null)),
        Arguments.of(
            "REQUEST_CHANNEL",
            (Enc) a -> RequestChannelFrame.encode(a, 0, 0, false, false, 1, null, null)),
        Arguments.of("REQUEST_N", (Enc) a -> RequestNFrame.encode(a, 0, 0, 1)),
        Arguments.of("CANCEL", (Enc) a -> CancelFrame.encode(a, 0, 0)),
        Arguments.of(
            "PAYLOAD", (Enc) a -> PayloadFrame.encode(a, 0, 0, FrameHeader.FLAG_NEXT, null, null)));
  }

  /** Encodes a frame with the given allocator. */
  interface Enc {
    ByteBuf encode(ByteBufAllocator alloc);
  }

  /** Spec, "Handling the Unexpected": such frames MUST be ignored, not treated as errors. */
  @ParameterizedTest(name = "{0}")
  @MethodSource("streamFrames")
  void read_streamFrameOnStreamZero_skippedWithoutCallingListener(String type, Enc encoder) {
    RecordingListener listener = new RecordingListener();
    assertThat(read(bytes(encoder.encode(alloc)), listener)).isFalse();
    assertThat(listener.events()).isEmpty();
  }

  static Stream<Arguments> connectionFrames() {
    return Stream.of(
        Arguments.of(
            "SETUP",
            (Enc) a -> SetupFrame.encode(a, 0, false, 1, 2, null, BINARY, BINARY, null, null)),
        Arguments.of("LEASE", (Enc) a -> LeaseFrame.encode(a, 0, 1, 1, null)),
        Arguments.of("KEEPALIVE", (Enc) a -> KeepAliveFrame.encode(a, 0, true, 0, null)),
        Arguments.of(
            "METADATA_PUSH", (Enc) a -> MetadataPushFrame.encode(a, 0, Unpooled.EMPTY_BUFFER)),
        Arguments.of("RESUME", (Enc) a -> ResumeFrame.encode(a, 0, Unpooled.EMPTY_BUFFER, 1, 2)),
        Arguments.of("RESUME_OK", (Enc) a -> ResumeOkFrame.encode(a, 0, 1)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("connectionFrames")
  void read_connectionFrameOnNonZeroStream_skippedWithoutCallingListener(String type, Enc encoder) {
    byte[] frame = bytes(encoder.encode(alloc));
    RecordingListener listener = new RecordingListener();
    assertThat(read(frame, listener)).as("valid on stream 0").isTrue();
    assertThat(listener.events()).hasSize(1);
    for (int streamId : new int[] {1, Integer.MAX_VALUE}) {
      RecordingListener skipped = new RecordingListener();
      assertThat(read(withStreamId(frame, streamId), skipped)).as(type).isFalse();
      assertThat(skipped.events()).isEmpty();
    }
  }

  // --------------------------------------------------------------------------------- request-n

  @Test
  void read_requestNZero_throws() {
    byte[] requestN = bytes(RequestNFrame.encode(alloc, 0, 1, 1));
    assertRejected(withInt(requestN, FrameHeader.SIZE, 0)).hasMessageContaining("REQUEST_N");
    // Only the reserved top bit set: n is 0.
    assertRejected(withInt(requestN, FrameHeader.SIZE, 0x8000_0000));
  }

  @Test
  void read_requestStreamOrChannelInitialRequestNZero_throws() {
    byte[] stream = bytes(RequestStreamFrame.encode(alloc, 0, 1, false, 1, null, null));
    assertRejected(withInt(stream, FrameHeader.SIZE, 0)).hasMessageContaining("REQUEST_STREAM");
    byte[] channel = bytes(RequestChannelFrame.encode(alloc, 0, 1, false, true, 1, null, null));
    assertRejected(withInt(channel, FrameHeader.SIZE, 0)).hasMessageContaining("REQUEST_CHANNEL");
  }

  @Test
  void read_requestNWithReservedBitSet_ignoresTheBit() {
    byte[] requestN = bytes(RequestNFrame.encode(alloc, 0, 1, 1));
    RecordingListener listener = new RecordingListener();
    assertThat(read(withInt(requestN, FrameHeader.SIZE, 0x8000_0005), listener)).isTrue();
    assertThat(listener.events()).containsExactly(new Decoded.RequestN(1, 5));
  }

  // ----------------------------------------------------------------------------------- PAYLOAD

  @Test
  void read_payloadWithoutNextCompleteOrFollows_throws() {
    assertRejected(bytes(PayloadFrame.encode(alloc, 0, 1, 0, null, null)))
        .hasMessageContaining("PAYLOAD");
    ByteBuf metadata = alloc.copyOf(utf8("m"));
    ByteBuf data = alloc.copyOf(utf8("d"));
    byte[] withMetadataOnly = bytes(PayloadFrame.encode(alloc, 0, 1, 0, metadata, data));
    metadata.release();
    data.release();
    assertRejected(withMetadataOnly);
    // I and the unused flag bits do not make up for missing N, C and F.
    assertRejected(rawFrame(FrameType.PAYLOAD, FLAG_IGNORE | 0x1F, 0));
  }

  // ------------------------------------------------------------------------------ unknown types

  static IntStream unknownTypes() {
    return IntStream.concat(
        IntStream.of(FrameType.RESERVED), IntStream.rangeClosed(0x0F, FrameType.EXT - 1));
  }

  @ParameterizedTest
  @MethodSource("unknownTypes")
  void read_unknownTypeWithoutIgnore_reportedToListener(int type) {
    RecordingListener listener = new RecordingListener();
    assertThat(read(rawFrame(type, 0, 4), listener)).isTrue();
    assertThat(read(rawFrame(type, FLAG_METADATA, 0), listener)).isTrue();
    assertThat(listener.events())
        .containsExactly(
            new Decoded.Unknown(1, type, 0), new Decoded.Unknown(1, type, FLAG_METADATA));
  }

  @ParameterizedTest
  @MethodSource("unknownTypes")
  void read_unknownTypeWithIgnore_skipsWithoutCallingListener(int type) {
    for (byte[] frame :
        new byte[][] {rawFrame(type, FLAG_IGNORE, 0), rawFrame(type, FLAG_IGNORE | 0xFF, 7)}) {
      RecordingListener listener = new RecordingListener();
      assertThat(read(frame, listener)).isFalse();
      assertThat(listener.events()).isEmpty();
    }
  }
}

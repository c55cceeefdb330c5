package io.millrace.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * Payloads whose size and every byte follow from a sequence number, from 1 byte to 64 KiB: a
 * receiver that checks each item against the next number it expects catches a lost, repeated,
 * reordered or corrupted item at once.
 */
public final class SequencedPayload {
  /** The sizes items cycle through. */
  public static final int[] SIZES = {1, 3, 64, 700, 4_000, 9_000, 65_536, 17, 1_500, 30_000};

  private SequencedPayload() {}

  public static int size(int seq) {
    return SIZES[seq % SIZES.length];
  }

  /** Item {@code seq}. */
  public static ByteBuf item(ByteBufAllocator alloc, int seq) {
    // One bulk write: under the paranoid leak detector every buffer access records a stack trace.
    return alloc.buffer(size(seq)).writeBytes(bytes(seq));
  }

  /** Null if {@code data} is item {@code seq}, else what differs. */
  public static String check(ByteBuf data, int seq) {
    int size = size(seq);
    if (data.readableBytes() != size) {
      return "item " + seq + ": " + data.readableBytes() + " bytes, expected " + size;
    }
    byte[] got = new byte[size];
    data.getBytes(data.readerIndex(), got);
    byte[] expected = bytes(seq);
    int at = java.util.Arrays.mismatch(got, expected);
    return at < 0 ? null : "item " + seq + ": content differs at byte " + at;
  }

  private static byte[] bytes(int seq) {
    byte[] b = new byte[size(seq)];
    for (int i = 0; i < b.length; i++) {
      b[i] = (byte) content(seq, i);
    }
    return b;
  }

  private static int content(int seq, int i) {
    return seq * 7 + i * 13 + (i >> 8);
  }
}

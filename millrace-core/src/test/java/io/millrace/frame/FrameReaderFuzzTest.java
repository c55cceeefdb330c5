package io.millrace.frame;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.testing.TrackingAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Random bytes and random damage to valid frames: {@link FrameReader} may accept a frame or throw
 * {@link FrameFormatException}, nothing else. Seeded, so a failure reproduces; the failure message
 * names the iteration and the input.
 */
class FrameReaderFuzzTest {
  private static final long SEED = 0x5EED_F4A3EL;
  private static final int ITERATIONS = 20_000;

  private final TrackingAllocator alloc = new TrackingAllocator();

  @AfterEach
  void everyBufferReleased() {
    alloc.assertAllReleased();
  }

  @Test
  void read_randomAndDamagedFrames_throwsOnlyFrameFormatException() {
    List<byte[]> corpus = new ArrayList<>();
    for (FrameCases.FrameCase c : FrameCases.all()) {
      corpus.add(FrameCases.bytes(c, alloc));
    }
    Random random = new Random(SEED);
    List<String> failures = new ArrayList<>();
    int accepted = 0;
    int rejected = 0;
    for (int i = 0; i < ITERATIONS && failures.size() < 10; i++) {
      byte[] input = input(random, corpus);
      int prefix = random.nextInt(3);
      byte[] array = new byte[prefix + input.length];
      System.arraycopy(input, 0, array, prefix, input.length);
      // Capacity ends with the frame: any read past it fails loudly.
      ByteBuf frame = Unpooled.wrappedBuffer(array).readerIndex(prefix);
      RecordingListener listener = new RecordingListener();
      try {
        boolean read = FrameReader.read(frame, listener);
        assertThat(listener.events()).hasSize(read ? 1 : 0);
        accepted++;
      } catch (FrameFormatException expected) {
        assertThat(listener.events()).isEmpty();
        rejected++;
      } catch (RuntimeException | AssertionError e) {
        failures.add("iteration " + i + ", input " + ByteBufUtil.hexDump(input) + ": " + e);
      } finally {
        frame.release();
      }
    }
    assertThat(failures).as("inputs that threw something else (seed %s)", SEED).isEmpty();
    // The generator must exercise both outcomes.
    assertThat(accepted).isGreaterThan(ITERATIONS / 10);
    assertThat(rejected).isGreaterThan(ITERATIONS / 10);
  }

  private static byte[] input(Random random, List<byte[]> corpus) {
    byte[] valid = corpus.get(random.nextInt(corpus.size()));
    switch (random.nextInt(6)) {
      case 0:
        {
          byte[] bytes = new byte[random.nextInt(48)];
          random.nextBytes(bytes);
          if (bytes.length >= FrameHeader.SIZE && random.nextBoolean()) {
            bytes[0] &= 0x7F;
            bytes[4] = (byte) (random.nextInt(FrameType.RESUME_OK + 1) << 2 | bytes[4] & 3);
          }
          return bytes;
        }
      case 1:
        return Arrays.copyOf(valid, random.nextInt(valid.length + 1));
      case 2:
        {
          byte[] bytes = valid.clone();
          for (int n = 1 + random.nextInt(4); n > 0; n--) {
            bytes[random.nextInt(bytes.length)] = (byte) random.nextInt();
          }
          return bytes;
        }
      case 3:
        {
          // Another type and flags over a valid body.
          byte[] bytes = valid.clone();
          bytes[4] = (byte) random.nextInt();
          bytes[5] = (byte) random.nextInt();
          if (random.nextBoolean()) {
            bytes[0] = bytes[1] = bytes[2] = bytes[3] = 0;
          }
          return bytes;
        }
      case 4:
        {
          // A large value where a length or count may sit.
          byte[] bytes = valid.clone();
          int at = random.nextInt(bytes.length);
          int width = 1 + random.nextInt(3);
          for (int k = 0; k < width && at + k < bytes.length; k++) {
            bytes[at + k] = (byte) (random.nextBoolean() ? 0xFF : random.nextInt());
          }
          return bytes;
        }
      default:
        {
          // Truncated, then damaged.
          byte[] bytes = Arrays.copyOf(valid, random.nextInt(valid.length + 1));
          if (bytes.length > 0) {
            bytes[random.nextInt(bytes.length)] ^= (byte) (1 << random.nextInt(8));
          }
          return bytes;
        }
    }
  }
}

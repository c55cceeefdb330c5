package io.millrace.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import com.google.protobuf.BytesValue;
import io.millrace.streams.BacklogExceededException;
import io.millrace.streams.internal.ReadAhead;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;

/** How far ahead of its reader a blocking iterator asks for messages. */
class MessageIteratorTest {
  @Test
  void eightByteMessages_askedForAboutEveryHalfWindow() {
    Run run = new Run(8, 20_000).go();
    assertThat(run.maxAhead).isEqualTo(ReadAhead.MAX_AHEAD);
    // 20,000 messages in requests of about half the window after the first: not one per few
    assertThat(run.requests).isBetween(20_000 / ReadAhead.MAX_AHEAD, 20_000 / 400);
    assertThat(run.inOrder).isTrue();
  }

  @Test
  void largeMessages_fewAhead_byTheirSize() {
    Run run = new Run(100_000, 200).go(); // about 1 MiB / 100 KB = 10 ahead
    assertThat(run.maxAheadAfterFirst).isLessThanOrEqualTo(11);
    assertThat(run.inOrder).isTrue();
  }

  @Test
  void veryLargeMessages_stillOneToReadWhileTheNextComes() {
    Run run = new Run(3_000_000, 60).go();
    assertThat(run.maxAheadAfterFirst).isEqualTo(ReadAhead.MIN_AHEAD);
  }

  @Test
  void messagesOfUnknownSize_keepTheFirstRequestsWindow() {
    MessageIterator<Object> it = new MessageIterator<>(null);
    long[] requested = {0};
    it.onSubscribe(recording(requested));
    long taken = 0;
    long maxAhead = 0;
    for (int delivered = 0; taken < 1_000; ) {
      while (delivered < requested[0] && delivered < 1_000) {
        it.onNext(new Object[] {delivered++}); // not a protobuf message
      }
      it.next();
      taken++;
      maxAhead = Math.max(maxAhead, requested[0] - taken);
    }
    assertThat(maxAhead).isLessThanOrEqualTo(ReadAhead.FIRST_REQUEST);
  }

  @Test
  void closedFromAnotherThread_theNextReadEndsTheStream_andDropsWhatWaited() throws Exception {
    MessageIterator<Object> it = new MessageIterator<>(null);
    boolean[] cancelled = {false};
    it.onSubscribe(
        new Subscription() {
          @Override
          public void request(long n) {}

          @Override
          public void cancel() {
            cancelled[0] = true;
          }
        });
    java.util.List<java.lang.ref.WeakReference<Object>> waited = new java.util.ArrayList<>();
    for (int i = 0; i < 5; i++) {
      Object message = new byte[1024];
      waited.add(new java.lang.ref.WeakReference<>(message));
      it.onNext(message);
    }
    Thread closer = new Thread(it::close);
    closer.start();
    closer.join(10_000);
    assertThat(cancelled[0]).as("the stream cancelled").isTrue();
    assertThat(it.hasNext()).as("nothing that waited is returned").isFalse();
    for (int i = 0; i < 50 && waited.stream().anyMatch(w -> w.get() != null); i++) {
      System.gc();
      Thread.sleep(20);
    }
    assertThat(waited)
        .as("dropped by the read, with the iterator still held")
        .allMatch(w -> w.get() == null);
    assertThat(it).isNotNull(); // held to here
  }

  @Test
  void messagesThatOutgrowTheirCredit_pastTheLimitOfBytesWaiting_cancelTheStream_afterWhatWaits() {
    MessageIterator<BytesValue> it = new MessageIterator<>(null);
    boolean[] cancelled = {false};
    it.onSubscribe(cancelling(cancelled));
    readTheFirstRequest(it);
    // Each counts 1 MiB: its serialized size and the overhead every waiting message counts.
    int overhead = io.millrace.core.internal.UnreadBudget.MESSAGE_OVERHEAD;
    BytesValue mebibyte = BytesValue.of(ByteString.copyFrom(new byte[(1 << 20) - 4 - overhead]));
    assertThat(mebibyte.getSerializedSize() + overhead).isEqualTo(1 << 20);
    int fit = (int) (BacklogExceededException.LIMIT >> 20); // 64 of them fit, the next does not
    for (int i = 0; i < fit; i++) {
      it.onNext(mebibyte);
    }
    assertThat(cancelled[0]).as("at the limit, not past it").isFalse();
    it.onNext(mebibyte);
    assertThat(cancelled[0]).as("past the limit: the stream cancelled").isTrue();
    it.onNext(mebibyte); // one the peer sent before it saw the CANCEL: dropped
    for (int i = 0; i < fit; i++) {
      assertThat(it.next()).as("what waited is read first").isSameAs(mebibyte);
    }
    assertThatThrownBy(it::hasNext)
        .isInstanceOfSatisfying(
            StatusException.class,
            e -> {
              assertThat(e.status().code()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
              assertThat(e.status().message()).contains("slow reader");
            });
  }

  @Test
  void theFirstRequestsMessages_madeBeforeAnySizeWasKnown_mayWaitWhateverTheirSize() {
    MessageIterator<BytesValue> it = new MessageIterator<>(null);
    boolean[] cancelled = {false};
    it.onSubscribe(cancelling(cancelled));
    BytesValue large = BytesValue.of(ByteString.copyFrom(new byte[3 << 20]));
    for (int i = 0; i < ReadAhead.FIRST_REQUEST; i++) { // 96 MiB, as the reader asked
      it.onNext(large);
    }
    assertThat(cancelled[0]).isFalse();
    for (int i = 0; i < ReadAhead.FIRST_REQUEST; i++) {
      assertThat(it.next()).isSameAs(large);
    }
    it.close();
  }

  @Test
  void aStreamOfLargeMessages_threeOfTheLargestMayWait_theFourthIsPastTheLimit() {
    MessageIterator<BytesValue> it = new MessageIterator<>(null);
    boolean[] cancelled = {false};
    it.onSubscribe(cancelling(cancelled));
    readTheFirstRequest(it);
    BytesValue large = BytesValue.of(ByteString.copyFrom(new byte[(30 << 20) - 4]));
    for (int i = 0; i < 3; i++) { // two asked for ahead and one more: 90 MiB, past 64 MiB
      it.onNext(large);
    }
    assertThat(cancelled[0]).isFalse();
    it.next(); // one taken: 60 MiB wait, and a fourth may come
    it.onNext(large);
    assertThat(cancelled[0]).isFalse();
    it.onNext(large); // 120 MiB: more than three of the largest
    assertThat(cancelled[0]).isTrue();
    for (int i = 0; i < 3; i++) {
      assertThat(it.next()).isSameAs(large);
    }
    assertThatThrownBy(it::hasNext).isInstanceOf(StatusException.class);
  }

  @Test
  void bytesTheReaderTook_noLongerCountAsWaiting_andOneMessageAloneMayBeAnySize() {
    MessageIterator<BytesValue> it = new MessageIterator<>(null);
    boolean[] cancelled = {false};
    it.onSubscribe(cancelling(cancelled));
    BytesValue mebibyte = BytesValue.of(ByteString.copyFrom(new byte[(1 << 20) - 4]));
    for (int round = 0; round < 4; round++) { // 4 x 12 MiB in all, never 64 at once
      for (int i = 0; i < 12; i++) {
        it.onNext(mebibyte);
      }
      for (int i = 0; i < 12; i++) {
        it.next();
      }
    }
    BytesValue huge = BytesValue.of(ByteString.copyFrom(new byte[70 << 20]));
    it.onNext(huge); // past the 64 MiB alone, and within three of itself: taken
    assertThat(cancelled[0]).isFalse();
    assertThat(it.next()).isSameAs(huge);
    it.close();
  }

  /** Delivers and reads the first request's messages, small ones. */
  private static void readTheFirstRequest(MessageIterator<BytesValue> it) {
    BytesValue small = BytesValue.of(ByteString.copyFromUtf8("small"));
    for (int i = 0; i < ReadAhead.FIRST_REQUEST; i++) {
      it.onNext(small);
      it.next();
    }
  }

  private static Subscription cancelling(boolean[] cancelled) {
    return new Subscription() {
      @Override
      public void request(long n) {}

      @Override
      public void cancel() {
        cancelled[0] = true;
      }
    };
  }

  /** Reads {@code count} messages of {@code size} bytes, delivering only what was asked for. */
  private static final class Run {
    final int size;
    final int count;
    long maxAhead;
    long maxAheadAfterFirst;
    int requests;
    boolean inOrder = true;

    Run(int size, int count) {
      this.size = size;
      this.count = count;
    }

    Run go() {
      MessageIterator<BytesValue> it = new MessageIterator<>(null);
      long[] requested = {0};
      int[] calls = {0};
      it.onSubscribe(
          new Subscription() {
            @Override
            public void request(long n) {
              requested[0] += n;
              calls[0]++;
            }

            @Override
            public void cancel() {}
          });
      ByteString body = ByteString.copyFrom(new byte[size - 4]); // the index goes in front
      long taken = 0;
      for (int delivered = 0; taken < count; ) {
        while (delivered < requested[0] && delivered < count) {
          it.onNext(
              BytesValue.of(
                  ByteString.copyFrom(
                          new byte[] {
                            (byte) (delivered >> 24),
                            (byte) (delivered >> 16),
                            (byte) (delivered >> 8),
                            (byte) delivered
                          })
                      .concat(body)));
          delivered++;
        }
        BytesValue m = it.next();
        int index = m.getValue().substring(0, 4).asReadOnlyByteBuffer().getInt();
        inOrder &= index == taken;
        taken++;
        long ahead = requested[0] - taken;
        maxAhead = Math.max(maxAhead, ahead);
        if (taken > ReadAhead.FIRST_REQUEST) {
          maxAheadAfterFirst = Math.max(maxAheadAfterFirst, ahead);
        }
      }
      requests = calls[0];
      it.close();
      return this;
    }
  }

  private static Subscription recording(long[] requested) {
    return new Subscription() {
      @Override
      public void request(long n) {
        requested[0] += n;
      }

      @Override
      public void cancel() {}
    };
  }
}

package io.millrace.streams.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** How many messages a blocking reader keeps asked for ahead of itself, by their size. */
class ReadAheadTest {
  @Test
  void smallMessages_theMostAhead_askedForAboutEveryHalfWindow() {
    Run run = new Run(8).read(20_000);
    assertThat(run.maxAhead).isEqualTo(ReadAhead.MAX_AHEAD);
    assertThat(run.requests).isBetween(20_000 / ReadAhead.MAX_AHEAD, 20_000 / 400);
  }

  @Test
  void largeMessages_aboutAMebibyteAhead() {
    Run run = new Run(100_000).read(200); // 1 MiB / (100,000 + framing) = 10
    assertThat(run.maxAheadAfterFirst).isEqualTo(10);
  }

  @Test
  void veryLargeMessages_oneToReadWhileTheNextComes() {
    Run run = new Run(3_000_000).read(60);
    assertThat(run.maxAheadAfterFirst).isEqualTo(ReadAhead.MIN_AHEAD);
  }

  @Test
  void messagesOfUnknownSize_keepTheFirstWindow() {
    Run run = new Run(-1).read(1_000);
    assertThat(run.maxAhead).isEqualTo(ReadAhead.FIRST_REQUEST);
    assertThat(run.requests).isGreaterThan(1_000 / ReadAhead.FIRST_REQUEST);
  }

  @Test
  void growingMessages_theWindowShrinksAsTheAverageFollows() {
    Run run = new Run(8).read(5_000);
    assertThat(run.maxAhead).isEqualTo(ReadAhead.MAX_AHEAD);
    run.size = 200_000;
    run.read(ReadAhead.MAX_AHEAD + 100); // what was asked for at the old size comes first
    run.maxAheadAfterFirst = 0;
    run.read(200);
    assertThat(run.maxAheadAfterFirst).isEqualTo(5); // 1 MiB / (200,000 + framing)
  }

  @Test
  void aFewSmallMessagesFirst_theWindowDoublesOncePerHalfWindow_notPerMessage() {
    // A header and a few small messages before large chunks: what is asked for at the small size
    // is what a reader of them needs next, not the 4,096 their size alone would allow.
    Run run = new Run(8).read(ReadAhead.FIRST_REQUEST / 2 + 3);
    assertThat(run.requested).isEqualTo(2L * ReadAhead.FIRST_REQUEST + ReadAhead.FIRST_REQUEST / 2);
    run.read(ReadAhead.FIRST_REQUEST); // another half window of the doubled one: doubled again
    assertThat(run.maxAhead).isEqualTo(4L * ReadAhead.FIRST_REQUEST);
  }

  /** A reader taking messages of one size, each delivered only once it was asked for. */
  private static final class Run {
    final ReadAhead ahead = new ReadAhead();
    long size;
    long requested = ReadAhead.FIRST_REQUEST;
    long taken;
    long maxAhead;
    long maxAheadAfterFirst;
    int requests;

    Run(long size) {
      this.size = size;
    }

    Run read(int count) {
      for (int i = 0; i < count; i++) {
        assertThat(taken).as("never more taken than asked for").isLessThan(requested);
        taken++;
        if (ahead.take()) {
          long more = ahead.more(size);
          if (more > 0) {
            requested += more;
            requests++;
          }
        }
        long a = requested - taken;
        maxAhead = Math.max(maxAhead, a);
        if (taken > ReadAhead.FIRST_REQUEST) {
          maxAheadAfterFirst = Math.max(maxAheadAfterFirst, a);
        }
      }
      return this;
    }
  }
}

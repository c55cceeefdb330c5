package io.millrace.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.testing.ObjectSize;
import org.junit.jupiter.api.Test;

/**
 * A stream's object stays at 48 bytes: every request-response, stream and channel makes one on each
 * side, and under a small heap the bytes a call allocates set how often the collector runs
 * (docs/design.md, "Memory and ownership", per-call objects).
 */
class StreamSizeTest {

  @Test
  void aStream_takes48Bytes_andKeepsItsInteractionAndSide() {
    assertThat(
            ObjectSize.of(
                i -> new DefaultStream(null, DefaultStream.REQUEST_STREAM, (i & 1) == 0, null)))
        .isEqualTo(48);
    for (int kind = DefaultStream.REQUEST_RESPONSE; kind <= DefaultStream.FIRE_AND_FORGET; kind++) {
      for (boolean requester : new boolean[] {true, false}) {
        DefaultStream s = new DefaultStream(null, kind, requester, null);
        assertThat(s.kind()).isEqualTo(kind);
        assertThat(s.requester()).isEqualTo(requester);
        s.set(DefaultStream.OUTBOUND_DONE | DefaultStream.INBOUND_DONE | DefaultStream.CANCELLED);
        s.set(DefaultStream.WAITING);
        s.clear(DefaultStream.WAITING);
        assertThat(s.kind()).as("the flags leave it be").isEqualTo(kind);
        assertThat(s.requester()).isEqualTo(requester);
        assertThat(s.isCancelled()).isTrue();
      }
    }
  }
}

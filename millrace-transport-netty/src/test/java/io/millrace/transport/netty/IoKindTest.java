package io.millrace.transport.netty;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.EventLoopGroup;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Telling the kind of an event loop group that code outside Millrace made. */
class IoKindTest {
  @Test
  void ofAGroup_isTheKindItWasMadeOf_forEachKindAvailableHere() {
    for (IoKind kind : IoKind.values()) {
      if (!kind.isAvailable()) {
        continue;
      }
      EventLoopGroup group = EventLoops.newGroup(kind, 1, "io-kind-test");
      try {
        assertThat(IoKind.of(group)).isEqualTo(kind);
        assertThat(EventLoops.serverChannel(group)).isEqualTo(kind.serverChannel(false));
      } finally {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
      }
    }
  }
}

package io.millrace.transport.netty;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.EventLoopGroup;
import java.text.MessageFormat;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/** Telling the kind of an event loop group that code outside Millrace made; logging the choice. */
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

  @Test
  void aKindSetOnABuilder_otherThanThePreferredOne_isLogged() {
    IoKind preferred = IoKind.preferred();
    IoKind other = preferred == IoKind.NIO ? null : IoKind.NIO;
    org.junit.jupiter.api.Assumptions.assumeTrue(other != null, "NIO is the preferred kind here");
    Logger logger = Logger.getLogger(SocketSettings.class.getName());
    List<String> messages = new CopyOnWriteArrayList<>();
    Handler handler =
        new Handler() {
          @Override
          public void publish(LogRecord record) {
            messages.add(MessageFormat.format(record.getMessage(), record.getParameters()));
          }

          @Override
          public void flush() {}

          @Override
          public void close() {}
        };
    logger.addHandler(handler);
    try {
      SocketSettings settings = new SocketSettings();
      settings.ioKind();
      assertThat(messages).as("the default is logged where it is chosen").isEmpty();
      settings.ioKind(other);
      assertThat(settings.ioKind()).isEqualTo(other);
      assertThat(messages).containsExactly("socket I/O: nio (set on the builder)");
    } finally {
      logger.removeHandler(handler);
    }
  }
}

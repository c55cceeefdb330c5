package io.millrace.examples.chat;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.transport.netty.MillraceClient;
import io.millrace.transport.netty.MillraceServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import org.junit.jupiter.api.Test;

/** The example's server and client, as the README runs them, in one JVM. */
class ChatExampleTest {
  @Test
  void theClientCreatesUpdatesFindsAndRemoves() throws Exception {
    ExecutorService handlers = Chat.handlers();
    MillraceServer server = Chat.serve(0, handlers);
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    try (MillraceClient client = Chat.client()) {
      Chat.run(
          Chat.connect(client, server.port()),
          new PrintStream(printed, true, StandardCharsets.UTF_8));
    } finally {
      server.close();
      handlers.shutdownNow();
    }
    assertThat(printed.toString(StandardCharsets.UTF_8))
        .isEqualTo(
            "created 1: hello\n"
                + "updated 1: hello, world\n"
                + "found 1: hello, world\n"
                + "removed 1: true\n"
                + "then NOT_FOUND: no message 1\n");
  }
}

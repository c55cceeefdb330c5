package io.millrace.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.DefaultEventLoop;
import io.netty.util.concurrent.ImmediateEventExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * When an RPC may subscribe to a handler's answer at once ({@link OneAnswer#takesAtOnce}). The rest
 * of its behaviour is {@code UnaryAnswer}'s, tested in millrace-streams.
 */
class OneAnswerTest {

  @Test
  void anAnswerIsTakenAtOnce_onlyOnTheLoop_withoutADeadline_andWithoutInterceptors()
      throws Exception {
    ServerContext onLoop = TestService.echoContext(ImmediateEventExecutor.INSTANCE);
    assertThat(OneAnswer.takesAtOnce(onLoop)).isTrue();
    onLoop.markIntercepted();
    assertThat(OneAnswer.takesAtOnce(onLoop)).isFalse();
    DefaultEventLoop other = new DefaultEventLoop();
    try {
      assertThat(OneAnswer.takesAtOnce(TestService.echoContext(other))).isFalse();
    } finally {
      other.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }
    ServerContext withDeadline =
        new ServerContext(
            TestService.served(TestService.ECHO),
            Headers.EMPTY,
            1_000_000,
            ImmediateEventExecutor.INSTANCE,
            16,
            null,
            null);
    assertThat(OneAnswer.takesAtOnce(withDeadline)).isFalse();
  }
}

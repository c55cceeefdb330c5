package io.millrace.echo.tck;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ImmediateEventExecutor;

/**
 * The Reactive Streams TCK on the generated RxJava binding's {@code SingleAnswer} on the call's
 * loop, where the Single is subscribed at once: an answer known then is handed over as a Scalar,
 * one that comes a millisecond later is held by the answer until the TCK asks for it.
 */
public class SingleAnswerAtOnceTckTest extends SingleAnswerTckTest {

  @Override
  EventExecutor loop() {
    return ImmediateEventExecutor.INSTANCE;
  }
}

package io.millrace.streams;

import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import org.testng.annotations.AfterClass;
import org.testng.annotations.BeforeClass;

/** A TCK Publisher verification against a server answering with {@link Echo}. */
abstract class EchoPublisherTck<T> extends PublisherVerification<T> {
  Pair pair;

  EchoPublisherTck() {
    super(new TestEnvironment(2_000, 50), 1_000);
  }

  @BeforeClass
  public void start() throws Exception {
    pair = new Pair(ReactiveResponder.of(new Echo()));
  }

  @AfterClass
  public void stop() {
    pair.close();
  }
}

package io.millrace.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** A call's cancel hooks: each runs once when the call is cancelled, unless it was removed. */
class ServerContextTest {

  @Test
  void aRemovedHook_doesNotRun_andTheOthersDoOnce() {
    ServerContext context = TestService.echoContext();
    List<String> ran = new CopyOnWriteArrayList<>();
    Runnable a = () -> ran.add("a");
    Runnable b = () -> ran.add("b");
    Runnable c = () -> ran.add("c");
    context.onCancel(a);
    context.onCancel(b);
    context.onCancel(c);
    assertThat(context.removeOnCancel(b)).isTrue();
    assertThat(context.removeOnCancel(b)).as("removed already").isFalse();
    assertThat(context.cancel(Status.CANCELLED)).isTrue();
    assertThat(context.cancel(Status.DEADLINE_EXCEEDED)).as("once").isFalse();
    assertThat(ran).containsExactly("a", "c");
    assertThat(context.removeOnCancel(a)).as("it has run").isFalse();
  }

  @Test
  void hooksAddedAndRemovedOneAtATime_doNotPileUp() {
    ServerContext context = TestService.echoContext();
    List<String> ran = new CopyOnWriteArrayList<>();
    for (int i = 0; i < 10_000; i++) { // a long bidirectional call: a hook per message
      int n = i;
      Runnable perMessage = () -> ran.add("message " + n);
      context.onCancel(perMessage);
      assertThat(context.removeOnCancel(perMessage)).isTrue();
    }
    Runnable last = () -> ran.add("last");
    context.onCancel(last);
    context.cancel(Status.CANCELLED);
    assertThat(ran).containsExactly("last");
  }

  @Test
  void values_areFoundByTheirKey_replaced_andRemovedByNull() {
    ServerContext context = TestService.echoContext();
    ServerContext.Key<String> user = ServerContext.Key.named("user");
    ServerContext.Key<String> sameName = ServerContext.Key.named("user");
    ServerContext.Key<Integer> tries = ServerContext.Key.named("tries");
    assertThat(context.get(user)).isNull();
    context.put(user, "ada").put(tries, 1);
    assertThat(context.get(user)).isEqualTo("ada");
    assertThat(context.get(tries)).isEqualTo(1);
    assertThat(context.get(sameName)).as("keys are compared by identity").isNull();
    context.put(user, "grace");
    assertThat(context.get(user)).isEqualTo("grace");
    assertThat(context.get(tries)).isEqualTo(1);
    context.put(user, null);
    assertThat(context.get(user)).isNull();
    assertThat(context.get(tries)).isEqualTo(1);
    context.put(tries, null);
    assertThat(context.get(tries)).isNull();
    context.put(sameName, null); // removing what is not there changes nothing
    assertThat(context.get(sameName)).isNull();
  }
}

package io.millrace.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * A call's cancel hooks: each runs once when the call is cancelled, unless it was removed; its
 * cancellation status, values, and the caller's address it keeps.
 */
class ServerContextTest {

  @Test
  void cancellation_isNullUntilCancelled_thenTheFirstStatus() {
    ServerContext context = TestService.echoContext();
    assertThat(context.isCancelled()).isFalse();
    assertThat(context.cancellation()).isNull();
    List<Status> seen = new CopyOnWriteArrayList<>();
    context.onCancel(() -> seen.add(context.cancellation()));
    assertThat(context.isCancelled()).as("a hook alone does not cancel").isFalse();
    assertThat(context.cancel(Status.DEADLINE_EXCEEDED)).isTrue();
    assertThat(context.cancel(Status.CANCELLED)).isFalse();
    assertThat(context.isCancelled()).isTrue();
    assertThat(context.cancellation()).isSameAs(Status.DEADLINE_EXCEEDED);
    assertThat(seen).as("the hook sees the status").containsExactly(Status.DEADLINE_EXCEEDED);
    List<Status> late = new CopyOnWriteArrayList<>();
    context.onCancel(() -> late.add(context.cancellation()));
    assertThat(late)
        .as("a hook added after runs at once")
        .containsExactly(Status.DEADLINE_EXCEEDED);
  }

  @Test
  void aCancel_withNoHooks_isKept_andAHookAddedAfterRunsAtOnce() {
    ServerContext context = TestService.echoContext();
    assertThat(context.cancel(Status.CANCELLED)).isTrue();
    assertThat(context.cancel(Status.DEADLINE_EXCEEDED)).as("once").isFalse();
    assertThat(context.isCancelled()).isTrue();
    assertThat(context.cancellation()).isSameAs(Status.CANCELLED);
    List<Status> seen = new CopyOnWriteArrayList<>();
    context.onCancel(() -> seen.add(context.cancellation()));
    assertThat(seen).containsExactly(Status.CANCELLED);
    ServerContext.Key<String> user = ServerContext.Key.named("user");
    context.put(user, "ada"); // extras made after the cancel keep it
    assertThat(context.get(user)).isEqualTo("ada");
    assertThat(context.cancellation()).isSameAs(Status.CANCELLED);
    assertThat(context.cancel(Status.CANCELLED)).isFalse();
  }

  @Test
  void aCall_keepsTheCallersAddressItCameWith_whenTheConnectionsChanges() {
    java.net.InetSocketAddress first = new java.net.InetSocketAddress("127.0.0.1", 40_001);
    java.net.InetSocketAddress resumed = new java.net.InetSocketAddress("127.0.0.1", 40_002);
    ServerContext.Origin origin =
        new ServerContext.Origin(
            io.netty.util.concurrent.ImmediateEventExecutor.INSTANCE,
            16,
            null,
            Runnable::run,
            first,
            null);
    assertThat(origin.at(first)).isSameAs(origin);
    assertThat(origin.at(new java.net.InetSocketAddress("127.0.0.1", 40_001)))
        .as("an equal address")
        .isSameAs(origin);
    ServerContext before =
        new ServerContext(TestService.served(TestService.ECHO), Headers.EMPTY, 0, false, origin);
    ServerContext.Origin after = origin.at(resumed);
    assertThat(after).isNotSameAs(origin);
    assertThat(after.loop()).isSameAs(origin.loop());
    ServerContext later =
        new ServerContext(TestService.served(TestService.ECHO), Headers.EMPTY, 0, false, after);
    assertThat(before.remoteAddress()).isEqualTo(first);
    assertThat(later.remoteAddress()).isEqualTo(resumed);
  }

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

package io.millrace.flavours;

import static io.millrace.flavours.Behaviour.*;

import io.millrace.core.StreamErrorException;
import io.millrace.futures.FutureHandler;
import io.millrace.streams.Payload;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * {@link Behaviour} as a user of the futures flavour writes it: request-response and
 * fire-and-forget, the interactions that flavour answers.
 */
final class FuturesEcho implements FutureHandler {
  private final Probe probe;

  FuturesEcho(Probe probe) {
    this.probe = probe;
  }

  @Override
  public void fireAndForget(Payload payload) {
    probe.fireAndForgets.add(payload.dataUtf8());
  }

  @Override
  public void metadataPush(Payload payload) {
    probe.metadataPushes.add(payload.metadataUtf8());
  }

  @Override
  public CompletionStage<Payload> requestResponse(Payload payload) {
    switch (payload.dataUtf8()) {
      case FAIL: // failed a moment later, on another thread: the stage is subscribed, not known
        return CompletableFuture.supplyAsync(
            () -> {
              throw new IllegalArgumentException("failed");
            },
            CompletableFuture.delayedExecutor(1, TimeUnit.MILLISECONDS));
      case THROW:
        throw new IllegalStateException("thrown");
      case CODE: // failed before it is returned: known at once
        return CompletableFuture.failedFuture(new StreamErrorException(USER_CODE, "custom"));
      case EMPTY:
        return CompletableFuture.completedFuture(null);
      case NEVER:
        CompletableFuture<Payload> never = new CompletableFuture<>();
        never.whenComplete(
            (v, e) -> {
              if (never.isCancelled()) {
                probe.answerCancelled();
              }
            });
        probe.neverArrived.countDown();
        return never;
      default:
        return CompletableFuture.supplyAsync(() -> echo(payload)); // answered from another thread
    }
  }
}

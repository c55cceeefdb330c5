package io.millrace.interop;

import io.millrace.core.Stream;
import java.util.ArrayDeque;
import java.util.List;

/**
 * The requester side of a Millrace channel: records the echo and sends queued payloads whenever the
 * responder's credit allows. {@link #send} and {@link #completeWhenSent} run on the event loop.
 */
final class ChannelRequester extends MillraceRecorder {
  private final ArrayDeque<Received> outbound = new ArrayDeque<>();
  private boolean completeWhenSent;
  private boolean completed;

  void send(Stream stream, List<Received> payloads) {
    outbound.addAll(payloads);
    drain(stream);
  }

  void completeWhenSent(Stream stream) {
    completeWhenSent = true;
    drain(stream);
  }

  @Override
  public void onReady(Stream stream) {
    drain(stream);
  }

  private void drain(Stream stream) {
    while (!outbound.isEmpty() && stream.isReady()) {
      Received next = outbound.poll();
      stream.next(Interop.buf(next.metadata()), Interop.buf(next.data()));
    }
    if (outbound.isEmpty() && completeWhenSent && !completed) {
      completed = true;
      stream.complete();
    }
  }
}

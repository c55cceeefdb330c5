package io.millrace.rpc;

import io.millrace.observer.ServerCallStreamObserver;
import io.millrace.observer.internal.UnaryObserver;
import java.util.function.Consumer;
import org.reactivestreams.Publisher;

/**
 * A unary method's answer in the StreamObserver flavour: its response observer is a {@link
 * UnaryObserver} with the RPC's rules (messages need no release; a cancelled call's {@code onNext}
 * throws CANCELLED), whose handler runs at once where {@link OneAnswer#takesAtOnce} allows and else
 * when the runtime subscribes.
 */
final class UnaryResponse {
  private UnaryResponse() {}

  static <Resp> Publisher<Resp> answer(
      ServerContext context, Consumer<ServerCallStreamObserver<Resp>> handler) {
    return UnaryObserver.answer(
        OneAnswer.takesAtOnce(context), context.loop(), Observers.MESSAGES, handler);
  }
}

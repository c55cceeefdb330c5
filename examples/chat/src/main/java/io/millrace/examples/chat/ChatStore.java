package io.millrace.examples.chat;

import com.google.protobuf.Timestamp;
import io.millrace.examples.chat.v1.ChatMessage;
import io.millrace.examples.chat.v1.ChatServiceFutures;
import io.millrace.examples.chat.v1.CreateRequest;
import io.millrace.examples.chat.v1.FindByIdRequest;
import io.millrace.examples.chat.v1.RemoveReply;
import io.millrace.examples.chat.v1.RemoveRequest;
import io.millrace.examples.chat.v1.UpdateRequest;
import io.millrace.rpc.ServerContext;
import io.millrace.rpc.Status;
import java.time.Instant;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * ChatService in the blocking flavour: messages in a ConcurrentHashMap, ids from a counter. Public
 * for the benchmark harness, whose CRUD scenario serves this same store over every system.
 */
public final class ChatStore implements ChatServiceFutures.Service {
  private final ConcurrentHashMap<String, ChatMessage> messages = new ConcurrentHashMap<>();
  private final AtomicLong ids = new AtomicLong();

  @Override
  public ChatMessage create(CreateRequest request, ServerContext context) {
    Instant now = Instant.now();
    ChatMessage m =
        ChatMessage.newBuilder()
            .setId(Long.toString(ids.incrementAndGet()))
            .setText(request.getText())
            .setCreated(
                Timestamp.newBuilder().setSeconds(now.getEpochSecond()).setNanos(now.getNano()))
            .build();
    messages.put(m.getId(), m);
    return m;
  }

  @Override
  public ChatMessage update(UpdateRequest request, ServerContext context) {
    ChatMessage updated =
        messages.computeIfPresent(
            request.getId(), (id, m) -> m.toBuilder().setText(request.getText()).build());
    if (updated == null) {
      throw notFound(request.getId());
    }
    return updated;
  }

  @Override
  public ChatMessage findById(FindByIdRequest request, ServerContext context) {
    ChatMessage m = messages.get(request.getId());
    if (m == null) {
      throw notFound(request.getId());
    }
    return m;
  }

  @Override
  public RemoveReply remove(RemoveRequest request, ServerContext context) {
    return RemoveReply.newBuilder().setRemoved(messages.remove(request.getId()) != null).build();
  }

  private static RuntimeException notFound(String id) {
    return Status.of(Status.Code.NOT_FOUND).withMessage("no message " + id).asException();
  }
}

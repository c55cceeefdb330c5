package io.millrace.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import java.util.List;
import org.junit.jupiter.api.Test;

class StatusAndHeadersTest {
  @Test
  void codes_haveGrpcsNumbers_andAnUnknownNumberReadsAsUnknown() {
    String[] grpcOrder = {
      "OK",
      "CANCELLED",
      "UNKNOWN",
      "INVALID_ARGUMENT",
      "DEADLINE_EXCEEDED",
      "NOT_FOUND",
      "ALREADY_EXISTS",
      "PERMISSION_DENIED",
      "RESOURCE_EXHAUSTED",
      "FAILED_PRECONDITION",
      "ABORTED",
      "OUT_OF_RANGE",
      "UNIMPLEMENTED",
      "INTERNAL",
      "UNAVAILABLE",
      "DATA_LOSS",
      "UNAUTHENTICATED"
    };
    for (int i = 0; i < grpcOrder.length; i++) {
      assertThat(Status.Code.of(i).name()).isEqualTo(grpcOrder[i]);
      assertThat(Status.Code.valueOf(grpcOrder[i]).value()).isEqualTo(i);
    }
    assertThat(Status.Code.of(17)).isEqualTo(Status.Code.UNKNOWN);
    assertThat(Status.Code.of(-1)).isEqualTo(Status.Code.UNKNOWN);
  }

  @Test
  void status_withMessageAndDetails_readsBack_andTheCauseDoesNotCountForEquality() {
    Status s =
        Status.of(Status.Code.NOT_FOUND)
            .withMessage("no such item")
            .withDetails(ByteString.copyFromUtf8("d"));
    assertThat(s.code()).isEqualTo(Status.Code.NOT_FOUND);
    assertThat(s.toString()).isEqualTo("NOT_FOUND: no such item");
    assertThat(s.withCause(new RuntimeException())).isEqualTo(s);
    assertThat(Status.OK.isOk()).isTrue();
    assertThat(s.isOk()).isFalse();
  }

  @Test
  void fromThrowable_findsAStatusExceptionAmongCauses_otherwiseUnknownWithoutTheMessage() {
    StatusException denied = Status.of(Status.Code.PERMISSION_DENIED).asException();
    assertThat(Status.fromThrowable(new RuntimeException("wrapped", denied)).code())
        .isEqualTo(Status.Code.PERMISSION_DENIED);
    IllegalStateException internal = new IllegalStateException("password=hunter2");
    Status unknown = Status.fromThrowable(internal);
    assertThat(unknown.code()).isEqualTo(Status.Code.UNKNOWN);
    assertThat(unknown.message()).isNull();
    assertThat(unknown.cause()).isSameAs(internal);
  }

  @Test
  void fromThrowable_aStreamCancelledForItsBacklog_isResourceExhaustedWithItsMessage() {
    // A handler that passes on its requests' failure (a Reactor or observer handler's stream of
    // requests cancelled for what waited) answers RESOURCE_EXHAUSTED, not UNKNOWN.
    var backlog = new io.millrace.streams.BacklogExceededException(16 << 20, 1 << 20, 16 << 20);
    Status s = Status.fromThrowable(new RuntimeException(backlog));
    assertThat(s.code()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(s.message()).isEqualTo(backlog.getMessage());
  }

  @Test
  void headers_keepOrderAndRepeats_textAndBinarySeparate() {
    Headers h =
        new Headers()
            .put("user-agent", "test/1")
            .put("x-tag", "a")
            .putBinary("trace-bin", new byte[] {0, (byte) 0xFF})
            .put("x-tag", "b");
    assertThat(h.size()).isEqualTo(4);
    assertThat(h.get("x-tag")).isEqualTo("b");
    assertThat(h.getAll("x-tag")).containsExactly("a", "b");
    assertThat(h.getBinary("trace-bin")).containsExactly(0, 0xFF);
    assertThat(h.get("trace-bin")).isNull();
    assertThat(h.keys()).containsExactly("user-agent", "x-tag", "trace-bin");
    assertThat(h.byteSize()).isEqualTo(10 + 6 + 5 + 1 + 9 + 2 + 5 + 1 + 4 * Headers.ENTRY_OVERHEAD);
    assertThat(h.remove("x-tag")).isTrue();
    assertThat(h.getAll("x-tag")).isEmpty();
    assertThat(h.size()).isEqualTo(2);
    assertThat(h.byteSize()).isEqualTo(10 + 6 + 9 + 2 + 2 * Headers.ENTRY_OVERHEAD);
  }

  @Test
  void headers_refuseWhatGrpcRefuses() {
    Headers h = new Headers();
    for (String bad : List.of("", "Upper", "sp ace", ":path", "ü")) {
      assertThatThrownBy(() -> h.put(bad, "v")).isInstanceOf(IllegalArgumentException.class);
    }
    assertThatThrownBy(() -> h.put("grpc-status", "0"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("reserved");
    assertThatThrownBy(() -> h.put("x", "line\nbreak"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> h.put("x-bin", "text")).hasMessageContaining("putBinary");
    assertThatThrownBy(() -> h.putBinary("x", new byte[1])).hasMessageContaining("-bin");
    assertThatThrownBy(() -> Headers.EMPTY.put("x", "y"))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThat(h.isEmpty()).isTrue();
  }
}

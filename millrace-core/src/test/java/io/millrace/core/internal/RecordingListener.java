package io.millrace.core.internal;

import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Records a stream's events as short strings: "next m|d", "complete", "error 0x..: msg", ... */
class RecordingListener implements StreamListener {
  final List<String> events = new ArrayList<>();
  Stream stream;

  @Override
  public void onNext(Stream stream, ByteBuf metadata, ByteBuf data) {
    this.stream = stream;
    events.add(
        "next "
            + (metadata == null ? "" : summary(metadata.toString(StandardCharsets.UTF_8)) + "|")
            + summary(data.toString(StandardCharsets.UTF_8)));
  }

  /** Long texts are recorded by length and hash, so failures stay readable. */
  static String summary(String text) {
    return text.length() <= 64 ? text : "<" + text.length() + " chars #" + text.hashCode() + ">";
  }

  @Override
  public void onComplete(Stream stream) {
    events.add("complete");
  }

  @Override
  public void onError(Stream stream, int errorCode, String message) {
    events.add("error 0x" + Integer.toHexString(errorCode) + ": " + message);
  }

  @Override
  public void onReady(Stream stream) {
    events.add("ready");
  }

  @Override
  public void onCancel(Stream stream) {
    events.add("cancel");
  }
}

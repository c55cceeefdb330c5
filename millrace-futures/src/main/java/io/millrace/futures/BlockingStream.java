package io.millrace.futures;

import io.millrace.streams.Payload;
import java.util.Iterator;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/**
 * A stream's payloads, read by blocking: {@link #hasNext()} waits for the next payload, the end or
 * the error (thrown as {@link io.millrace.core.StreamErrorException}). Payloads are asked for ahead
 * of the reader, about a mebibyte of them by their average size (between two and 4,096), and below
 * that {@link io.millrace.streams.StreamsOptions#prefetch()} more may wait, so a slow reader holds
 * the responder back through credit. Credit counts payloads, so a responder whose payloads grow
 * after it was asked at a smaller size could leave more waiting than that: past {@link
 * io.millrace.streams.BacklogExceededException#LIMIT} bytes (or three of its largest payload, when
 * more; the first request's payloads exempt), the stream is cancelled and, after what waited,
 * {@link #hasNext()} throws {@link io.millrace.streams.BacklogExceededException}. Close it to stop
 * early: {@link #close()} sends CANCEL (try-with-resources, or {@link #stream()}'s close). An
 * interrupted wait cancels the stream and throws with the interrupt flag set. One reader thread at
 * a time; virtual threads are welcome (waiting unmounts them).
 */
public interface BlockingStream extends Iterator<Payload>, AutoCloseable {

  /**
   * Stops the stream (CANCEL unless it has ended) and releases what was not read. Idempotent. From
   * the reader's thread it also releases a payload {@link #hasNext()} took and {@link #next()} did
   * not hand out; from another thread that one stays the reader's (with zero-copy on, the reader
   * must still take it with {@code next()} and release it).
   */
  @Override
  void close();

  /** The payloads as a sequential {@link Stream}; closing it closes this. */
  default Stream<Payload> stream() {
    return StreamSupport.stream(
            Spliterators.spliteratorUnknownSize(this, Spliterator.ORDERED | Spliterator.NONNULL),
            false)
        .onClose(this::close);
  }
}

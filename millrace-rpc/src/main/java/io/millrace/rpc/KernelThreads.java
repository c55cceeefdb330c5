package io.millrace.rpc;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What Linux says about this process's threads, through {@code /proc}: a thread's id in the kernel
 * and where it sleeps. Java has neither on JDK 17: a thread in a blocking socket read is RUNNABLE
 * to Java, like one on a core. Where {@code /proc} does not say (another system, or a kernel that
 * hides where threads sleep), {@link #AVAILABLE} is false and callers do without.
 */
final class KernelThreads {
  /**
   * Whether the kernel names where this process's threads sleep: the "Reference Handler" thread, or
   * any other, is asleep, so at least one of them shows a wait channel other than "0".
   */
  static final boolean AVAILABLE = currentId() > 0 && namesWaitChannels();

  private KernelThreads() {}

  /** The calling thread's id in the kernel, or -1. */
  static int currentId() {
    try {
      String stat =
          new String(Files.readAllBytes(Path.of("/proc/thread-self/stat")), StandardCharsets.UTF_8);
      return Integer.parseInt(stat.substring(0, stat.indexOf(' ')));
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }

  /**
   * True if thread {@code id} of this process is asleep in the kernel ({@code
   * /proc/self/task/<id>/wchan} names the kernel function it sleeps in; "0" while it is on a core
   * or waiting for one) and not on a futex (where locks, parks and the JVM's own waits sleep): in a
   * read, a poll, an accept, disk I/O.
   */
  static boolean asleepOutsideFutex(int id) {
    String channel = waitChannel(id);
    return channel != null && !channel.equals("0") && !channel.contains("futex");
  }

  private static String waitChannel(int id) {
    // A small read: /proc gives its files' size as 0, so readAllBytes would grow an 8 KiB array.
    try (FileChannel file = FileChannel.open(Path.of("/proc/self/task/" + id + "/wchan"))) {
      ByteBuffer channel = ByteBuffer.allocate(64);
      file.read(channel);
      return new String(channel.array(), 0, channel.position(), StandardCharsets.US_ASCII).trim();
    } catch (IOException | RuntimeException e) {
      return null; // the thread has ended
    }
  }

  private static boolean namesWaitChannels() {
    try (var tasks = Files.list(Path.of("/proc/self/task"))) {
      return tasks
          .map(task -> waitChannel(Integer.parseInt(task.getFileName().toString())))
          .anyMatch(channel -> channel != null && !channel.isEmpty() && !channel.equals("0"));
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }
}

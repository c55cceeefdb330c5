package io.millrace.grpc;

import io.netty.util.concurrent.EventExecutor;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs tasks one at a time, in the order given, on {@code delegate}: gRPC's listeners are called
 * this way (never two callbacks of one call at once), whichever threads the events come from. With
 * a direct delegate the thread that submits into an idle executor runs the tasks, including those
 * submitted meanwhile by others.
 */
final class SerializingExecutor implements Executor, Runnable {
  private static final System.Logger LOG = System.getLogger(SerializingExecutor.class.getName());

  private final Executor delegate;
  private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  private final AtomicInteger wip = new AtomicInteger();

  SerializingExecutor(Executor delegate) {
    this.delegate = delegate;
  }

  @Override
  public void execute(Runnable task) {
    if (delegate instanceof EventExecutor loop && loop.inEventLoop() && wip.compareAndSet(0, 1)) {
      // Idle, and on the loop the callbacks belong to: the task runs now, not through a queue
      // node, then whatever it (or another thread) submitted meanwhile.
      runOne(task);
      run();
      return;
    }
    tasks.add(task);
    if (wip.getAndIncrement() != 0) {
      return;
    }
    try {
      delegate.execute(this);
    } catch (RejectedExecutionException e) {
      // The executor is shut down or full: the callbacks run here rather than never.
      LOG.log(System.Logger.Level.WARNING, "a gRPC callback executor refused a task", e);
      run();
    } catch (RuntimeException e) {
      run(); // whatever else it threw: the callbacks still run, then the caller hears of it
      throw e;
    }
  }

  private static void runOne(Runnable task) {
    try {
      task.run();
    } catch (Throwable t) { // whatever it was, the callbacks after it still run
      LOG.log(System.Logger.Level.WARNING, "a gRPC listener callback threw", t);
    }
  }

  @Override
  public void run() {
    int missed = 1;
    do {
      Runnable task;
      while ((task = tasks.poll()) != null) {
        runOne(task);
      }
      missed = wip.addAndGet(-missed);
    } while (missed != 0);
  }
}

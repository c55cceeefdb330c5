package io.millrace.core.internal;

import io.millrace.core.Acceptor;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.Responder;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * A resumable client and a resumption-enabled server on one test loop, joined by in-memory
 * connections that the test can break: what one side flushes reaches the other as a read batch,
 * unless the connection is cut first. The connections frame like TCP (3-byte headroom, batches of
 * prefixed frames), so the replay store sees what it sees on a socket. The client reconnects
 * through {@link #reconnect}, which opens a new connection and a new server engine, as a server
 * accepting a socket would.
 */
final class ResumeHarness implements AutoCloseable {
  final TestLoop loop = new TestLoop();
  final ManualTimers timers = new ManualTimers();
  final ResumeSessions sessions;
  final ConnectionConfig serverConfig;
  final Acceptor acceptor;
  final ConnectionEngine client;
  final ConnectionEngine server;
  final List<ConnectionEngine> serverEngines = new ArrayList<>();
  MemoryPipe current;
  int connections;
  boolean refuseReconnects;

  /** When positive, each new connection is cut after this many frames have crossed it. */
  int cutAfterFrames;

  ResumeHarness(
      ConnectionConfig clientConfig,
      ConnectionConfig serverConfig,
      Responder serverResponder,
      Responder clientResponder,
      long serverResumeBytes) {
    this.serverConfig = serverConfig;
    this.acceptor = (setup, connection) -> serverResponder;
    this.sessions = new ResumeSessions(serverConfig.resumption(), serverResumeBytes);
    MemoryPipe pipe = newPipe();
    client =
        ConnectionEngine.resumableClient(
            pipe.clientEnd, clientConfig, clientResponder, this::reconnect, timers);
    server = newServerEngine(pipe.serverEnd);
    loop.run(
        () -> {
          server.start(null, null);
          client.start(null, null);
        });
    loop.drain();
  }

  private ConnectionEngine newServerEngine(MemoryPipe.End end) {
    ConnectionEngine engine =
        ConnectionEngine.resumableServer(end, serverConfig, acceptor, null, null, sessions, timers);
    serverEngines.add(engine);
    return engine;
  }

  private MemoryPipe newPipe() {
    connections++;
    current = new MemoryPipe(loop, cutAfterFrames);
    return current;
  }

  /** The client's reconnector: a new connection at once, unless refused. */
  private void reconnect(ResumableSession session) {
    if (refuseReconnects) {
      session.reconnectFailed(new IOException("connection refused"));
      return;
    }
    MemoryPipe pipe = newPipe();
    ConnectionEngine engine = newServerEngine(pipe.serverEnd);
    engine.start(null, null);
    session.attachNew(pipe.clientEnd);
  }

  /** Breaks the current connection now: what is in flight is lost, both sides see it close. */
  void cut() {
    loop.run(() -> current.cut());
  }

  /** Runs the loop until quiet, advancing the clock by {@code millis} each round, bounded. */
  void settle(int rounds, long millis) {
    for (int i = 0; i < rounds; i++) {
      loop.drain();
      loop.run(() -> timers.advance(java.time.Duration.ofMillis(millis)));
    }
    loop.drain();
  }

  @Override
  public void close() {
    loop.run(
        () -> {
          client.dispose();
          for (ConnectionEngine e : serverEngines) {
            e.dispose();
          }
        });
    loop.drain();
    loop.close();
  }
}

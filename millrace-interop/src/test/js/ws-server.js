'use strict';
// An rsocket-js server over WebSocket (rsocket-websocket-server on the ws package) at 127.0.0.1 on
// the given port or a free one (printed as "listening PORT"), taking upgrades on any path, with the
// echo semantics of the Java tests' servers:
//   request-response echoes data and metadata; data "error:MSG" fails with APPLICATION_ERROR MSG;
//   request-stream with decimal data N sends "0".."N-1" with the request's metadata as credit allows;
//   request-channel echoes every inbound payload, the first included, and completes when the
//   requester does;
//   fire-and-forget prints "fire-and-forget data=... metadata=...".
// Runs until killed.
//
// Usage: node ws-server.js [port]
const { WebSocketServer } = require('ws');
const { RSocketServer } = require('rsocket-core');
const { WebsocketServerTransport } = require('rsocket-websocket-server');
const { describe, payload } = require('./payload-lines');

const MAX_REQUEST_N = 0x7fffffff;

function requestResponse(request, subscriber) {
  const text = request.data ? request.data.toString('utf8') : '';
  setImmediate(() => {
    if (text.startsWith('error:')) {
      subscriber.onError(new Error(text.substring('error:'.length)));
    } else {
      subscriber.onNext(payload(request.data || '', request.metadata), true);
    }
  });
  return { cancel() {}, onExtension() {} };
}

function requestStream(request, initialRequestN, subscriber) {
  const text = request.data ? request.data.toString('utf8') : '';
  const metadata = request.metadata;
  let credit = initialRequestN;
  let next = 0;
  let done = false;
  const pump = () => {
    if (done) {
      return;
    }
    if (!/^\d+$/.test(text)) {
      done = true;
      subscriber.onError(new Error(`request-stream data must be a decimal count, got '${text}'`));
      return;
    }
    const total = Number(text);
    if (total === 0) {
      done = true;
      subscriber.onComplete();
      return;
    }
    while (!done && credit > 0 && next < total) {
      credit--;
      const seq = next++;
      done = seq === total - 1;
      subscriber.onNext(payload(String(seq), metadata), done);
    }
  };
  setImmediate(pump);
  return {
    request(n) {
      credit += n;
      pump();
    },
    cancel() {
      done = true;
    },
    onExtension() {},
  };
}

function requestChannel(first, initialRequestN, isCompleted, subscriber) {
  const queue = [payload(first.data || '', first.metadata)];
  let credit = initialRequestN;
  let inboundDone = isCompleted;
  let finished = false;
  const pump = () => {
    while (!finished && credit > 0 && queue.length > 0) {
      credit--;
      subscriber.onNext(queue.shift(), false);
    }
    if (!finished && inboundDone && queue.length === 0) {
      finished = true;
      subscriber.onComplete();
    }
  };
  if (!isCompleted) {
    subscriber.request(MAX_REQUEST_N);
  }
  setImmediate(pump);
  return {
    onNext(p, isComplete) {
      queue.push(payload(p.data || '', p.metadata));
      inboundDone = inboundDone || isComplete;
      pump();
    },
    onComplete() {
      inboundDone = true;
      pump();
    },
    onError() {
      finished = true;
    },
    request(n) {
      credit += n;
      pump();
    },
    cancel() {
      finished = true;
    },
    onExtension() {},
  };
}

function fireAndForget(request) {
  console.log(describe('fire-and-forget', request));
  return { cancel() {} };
}

async function main() {
  const port = process.argv[2] ? Number(process.argv[2]) : 0;
  let webSocketServer;
  const server = new RSocketServer({
    transport: new WebsocketServerTransport({
      host: '127.0.0.1',
      port,
      wsCreator: (options) => {
        webSocketServer = new WebSocketServer({ host: options.host, port: options.port });
        return webSocketServer;
      },
    }),
    acceptor: {
      accept: async () => ({ requestResponse, requestStream, requestChannel, fireAndForget }),
    },
  });
  await server.bind();
  console.log(`listening ${webSocketServer.address().port}`);
}

main().catch((e) => {
  console.log(`problem ${e && e.stack ? e.stack : e}`);
  process.exit(1);
});

'use strict';
// An rsocket-js client over WebSocket (rsocket-websocket-client on the ws package) against an echo
// server at <url>. One after the other: request-response with and without metadata and with data
// "error:boom", request-stream "5" (credit 2 at a time), request-channel first/a/b, a
// fire-and-forget and a last request-response. Prints each payload received as
// "<interaction> data=D" (and " metadata=M" if it has some), each completion as
// "<interaction> complete", each error as "<interaction> error code=C message=M", the
// fire-and-forget as "fire-and-forget sent", then "done" and exits 0; any other problem prints
// "problem ..." and exits 1.
//
// Usage: node ws-client.js <url>
const WebSocket = require('ws');
const { RSocketConnector } = require('rsocket-core');
const { WebsocketClientTransport } = require('rsocket-websocket-client');
const { describe, payload } = require('./payload-lines');

const MAX_REQUEST_N = 0x7fffffff;

function printer(kind, resolve, onNext) {
  return {
    onNext(p, isComplete) {
      console.log(describe(kind, p));
      if (onNext) {
        onNext();
      }
      if (isComplete) {
        console.log(`${kind} complete`);
        resolve();
      }
    },
    onComplete() {
      console.log(`${kind} complete`);
      resolve();
    },
    onError(e) {
      console.log(`${kind} error code=${e.code} message=${e.message}`);
      resolve();
    },
    onExtension() {},
  };
}

function requestResponse(rsocket, request) {
  return new Promise((resolve) => {
    rsocket.requestResponse(request, {
      onNext(p) {
        console.log(describe('request-response', p));
        resolve();
      },
      onComplete() {
        console.log('request-response complete');
        resolve();
      },
      onError(e) {
        console.log(`request-response error code=${e.code} message=${e.message}`);
        resolve();
      },
      onExtension() {},
    });
  });
}

function requestStream(rsocket, request, window) {
  return new Promise((resolve) => {
    let received = 0;
    const requester = rsocket.requestStream(
      request,
      window,
      printer('request-stream', resolve, () => {
        received++;
        if (received % window === 0) {
          requester.request(window);
        }
      }),
    );
  });
}

function requestChannel(rsocket, first, rest) {
  return new Promise((resolve) => {
    const outbound = rest.slice();
    let credit = 0;
    let completed = false;
    let requester;
    const pump = () => {
      while (credit > 0 && outbound.length > 0) {
        credit--;
        requester.onNext(outbound.shift(), false);
      }
      if (outbound.length === 0 && !completed) {
        completed = true;
        requester.onComplete();
      }
    };
    requester = rsocket.requestChannel(first, MAX_REQUEST_N, false, {
      ...printer('request-channel', resolve),
      request(n) {
        credit += n;
        pump();
      },
      cancel() {
        outbound.length = 0;
      },
    });
  });
}

function fireAndForget(rsocket, request) {
  return new Promise((resolve, reject) => {
    rsocket.fireAndForget(request, {
      onComplete() {
        console.log('fire-and-forget sent');
        resolve();
      },
      onError(e) {
        reject(e);
      },
    });
  });
}

async function main() {
  const url = process.argv[2];
  const connector = new RSocketConnector({
    setup: { keepAlive: 10000, lifetime: 30000 },
    transport: new WebsocketClientTransport({ url, wsCreator: (u) => new WebSocket(u) }),
  });
  const rsocket = await connector.connect();
  await requestResponse(rsocket, payload('hello', 'meta'));
  await requestResponse(rsocket, payload('plain'));
  await requestResponse(rsocket, payload('error:boom'));
  await requestStream(rsocket, payload('5', 'stream-meta'), 2);
  await requestChannel(rsocket, payload('first', 'first-meta'), [
    payload('a'),
    payload('b', 'b-meta'),
  ]);
  await fireAndForget(rsocket, payload('fnf-data', 'fnf-meta'));
  await requestResponse(rsocket, payload('after'));
  console.log('done');
  rsocket.close();
  process.exit(0);
}

main().catch((e) => {
  console.log(`problem ${e && e.stack ? e.stack : e}`);
  process.exit(1);
});

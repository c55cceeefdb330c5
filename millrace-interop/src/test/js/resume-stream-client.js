'use strict';
// An rsocket-js client with resumption on: requests a stream of sequenced items from the server at
// 127.0.0.1:<port> and checks each one (size and every byte follow from its number, as in
// io.millrace.testing.SequencedPayload). Prints "progress N" every 50 items and "done N" at the
// end; any problem prints "problem ..." and exits 1.
//
// Usage: node resume-stream-client.js <port> <items>
const crypto = require('crypto');
const { RSocketConnector } = require('rsocket-core');
const { TcpClientTransport } = require('rsocket-tcp-client');

const { check } = require('./sequenced');

async function main() {
  const port = Number(process.argv[2]);
  const items = Number(process.argv[3]);
  const connector = new RSocketConnector({
    setup: { keepAlive: 200, lifetime: 30000 },
    transport: new TcpClientTransport({ connectionOptions: { host: '127.0.0.1', port } }),
    resume: {
      tokenGenerator: () => crypto.randomBytes(16),
      reconnectFunction: () => new Promise((resolve) => setTimeout(resolve, 20)),
    },
  });
  const rsocket = await connector.connect();
  let received = 0;
  await new Promise((resolve, reject) => {
    const window = 8;
    const requester = rsocket.requestStream({ data: Buffer.from(String(items)) }, window, {
      onNext(payload, isComplete) {
        const problem = check(payload.data, received);
        received++;
        if (problem) {
          reject(new Error(problem));
          return;
        }
        if (received % 50 === 0) {
          console.log(`progress ${received}`);
        }
        if (isComplete) {
          resolve();
        } else if (received % window === 0) {
          requester.request(window);
        }
      },
      onComplete() {
        resolve();
      },
      onError(e) {
        reject(e);
      },
      onExtension() {},
    });
  });
  console.log(`done ${received}`);
  rsocket.close();
  process.exit(received === items ? 0 : 1);
}

main().catch((e) => {
  console.log(`problem ${e && e.stack ? e.stack : e}`);
  process.exit(1);
});

'use strict';
// An rsocket-js server with resumption on, at 127.0.0.1 on a free port (printed as "listening
// PORT"): a request-stream whose data is a decimal N gets the sequenced items 0..N-1, sent as the
// requester's credit allows. Runs until killed.
//
// Usage: node resume-stream-server.js
const net = require('net');
const { RSocketServer } = require('rsocket-core');
const { TcpServerTransport } = require('rsocket-tcp-server');
const { item } = require('./sequenced');

async function main() {
  let socketServer;
  const server = new RSocketServer({
    transport: new TcpServerTransport({
      listenOptions: { host: '127.0.0.1', port: 0 },
      socketCreator: (options) => {
        socketServer = net.createServer(options);
        return socketServer;
      },
    }),
    resume: { sessionTimeout: 60000 },
    acceptor: {
      accept: async () => ({
        requestStream(payload, initialRequestN, subscriber) {
          const total = Number(payload.data.toString());
          let next = 0;
          let credit = initialRequestN;
          let cancelled = false;
          const pump = () => {
            while (!cancelled && credit > 0 && next < total) {
              credit--;
              const seq = next++;
              subscriber.onNext({ data: item(seq) }, seq === total - 1);
            }
          };
          setImmediate(pump);
          return {
            request(n) {
              credit += n;
              pump();
            },
            cancel() {
              cancelled = true;
            },
            onExtension() {},
          };
        },
      }),
    },
  });
  await server.bind();
  console.log(`listening ${socketServer.address().port}`);
}

main().catch((e) => {
  console.log(`problem ${e && e.stack ? e.stack : e}`);
  process.exit(1);
});

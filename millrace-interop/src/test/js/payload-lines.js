'use strict';
// Payloads as lines of text for the Java side to compare: "<kind> data=<data>", followed by
// " metadata=<metadata>" when the payload has metadata (UTF-8 throughout).

function describe(kind, payload) {
  const data = payload.data ? payload.data.toString('utf8') : '';
  const metadata = payload.metadata ? ` metadata=${payload.metadata.toString('utf8')}` : '';
  return `${kind} data=${data}${metadata}`;
}

// A payload of `data` and, unless undefined or null, `metadata` (strings or buffers, copied).
function payload(data, metadata) {
  const p = { data: Buffer.from(data) };
  if (metadata !== undefined && metadata !== null) {
    p.metadata = Buffer.from(metadata);
  }
  return p;
}

module.exports = { describe, payload };

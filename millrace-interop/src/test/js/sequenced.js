'use strict';
// Sequenced payloads, as io.millrace.testing.SequencedPayload makes them: the size and every byte
// of item N follow from N, so a lost, repeated, reordered or corrupted item is caught at once.

const SIZES = [1, 3, 64, 700, 4000, 9000, 65536, 17, 1500, 30000];

function check(data, seq) {
  const size = SIZES[seq % SIZES.length];
  if (!data || data.length !== size) {
    return `item ${seq}: ${data ? data.length : 'no'} bytes, expected ${size}`;
  }
  for (let i = 0; i < size; i++) {
    if (data[i] !== ((seq * 7 + i * 13 + (i >> 8)) & 0xff)) {
      return `item ${seq}: content differs at byte ${i}`;
    }
  }
  return null;
}

function item(seq) {
  const size = SIZES[seq % SIZES.length];
  const data = Buffer.allocUnsafe(size);
  for (let i = 0; i < size; i++) {
    data[i] = (seq * 7 + i * 13 + (i >> 8)) & 0xff;
  }
  return data;
}

module.exports = { check, item };

#!/bin/bash
# alternated A/B: RPC Reactor + futures request-stream, with the core, 8 B
# Builds: /tmp/bA = 65a2b95; /tmp/bB = 65a2b95 with ProtobufMarshaller.SCRATCH_ARRAY_BYTES 8 KiB instead of 64 (not kept)
for i in $(seq 1 ${PAIRS:-3}); do
  for b in A B; do
    echo "== build $b pair $i $(date +%T)"
    java -jar /tmp/b$b/millrace-bench.jar --level rpc --systems ${SYS:-millrace-rpc,millrace} --interactions ${INT:-request-stream} --sizes 8 --warmup 6 --duration 5 --rounds 1 --skip-heap --skip-latency 2>&1 | grep -E "^\["
  done
done

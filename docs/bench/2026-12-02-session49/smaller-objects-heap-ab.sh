#!/bin/bash
# alternated A/B: RPC request-response at 1g and 20m, 8 B
# Builds: /tmp/bA = 65a2b95; /tmp/bB = a0fcaa5 (smaller DefaultStream, UnaryCall, ServerContext)
for i in $(seq 1 ${PAIRS:-3}); do
  for b in A B; do
    echo "== build $b pair $i $(date +%T)"
    java -jar /tmp/b$b/millrace-bench.jar --level rpc --systems ${SYS:-millrace-rpc} --interactions request-response --sizes 8 --warmup 6 --duration 5 --rounds 1 --skip-latency --heap 20m 2>&1 | grep -E "^\[|request-response .*%"
  done
done

#!/bin/bash
# alternated A/B at the session's last code: RPC Reactor and futures, request-response and request-stream, with the core, 8 B
for i in 1 2; do
  for b in A B; do
    echo "== build $b pair $i $(date +%T)"
    java -jar /tmp/b$b/millrace-bench.jar --level rpc --systems millrace-rpc,millrace-rpc-futures,millrace --interactions request-response,request-stream --sizes 8 --warmup 6 --duration 4 --rounds 1 --skip-heap --skip-latency 2>&1 | grep -E "^\["
  done
done

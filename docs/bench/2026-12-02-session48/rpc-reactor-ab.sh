#!/bin/bash
# alternated A/B: RPC Reactor request-stream (the on-loop path) and request-response, with the core, 8 B
for i in 1 2 3; do
  for b in A B; do
    echo "== build $b pair $i $(date +%T)"
    java -jar /tmp/b$b/millrace-bench.jar --level rpc --systems millrace-rpc,millrace --interactions request-stream,request-response --sizes 8 --warmup 8 --duration 5 --rounds 1 --skip-heap --skip-latency 2>&1 | grep -E "^\["
  done
done

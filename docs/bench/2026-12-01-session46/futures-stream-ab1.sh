#!/bin/bash
for i in 1 2 3; do for v in head 1024 4096; do
  echo "== $v round $i $(date +%T)"
  java -jar /tmp/b$v/millrace-bench.jar --level rpc --systems millrace-rpc-futures,millrace --interactions request-stream --sizes 8 --warmup 8 --duration 5 --rounds 1 --skip-heap --skip-latency 2>&1 | grep "^\["
done; done

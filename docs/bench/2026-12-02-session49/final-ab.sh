#!/bin/bash
# alternated A/B at the session's last code: RPC Reactor and core, request-response and request-stream, 8 B
# Builds: /tmp/bA = 65a2b95 (the session's start); /tmp/bB = the session's last code commit (Origin.at
# simplification on top of b82cff0). Each is millrace-bench/target/{millrace-bench.jar,
# millrace-bench-classes.jar,lib} of a `./mvnw -q -B package -Dmaven.test.skip=true -o` build.
# (pairs 3 and 4 in final-ab.txt: the same loop with --systems millrace --interactions request-response)
for i in 1 2; do
  for b in A B; do
    echo "== build $b pair $i $(date +%T)"
    java -jar /tmp/b$b/millrace-bench.jar --level rpc --systems millrace-rpc,millrace --interactions request-response,request-stream --sizes 8 --warmup 6 --duration 4 --rounds 1 --skip-heap --skip-latency 2>&1 | grep -E "^\["
  done
done

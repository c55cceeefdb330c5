#!/bin/bash
# alternated A/B: RPC futures request-stream and the core, 8 B
for i in 1 2 3; do
  for b in A B; do
    echo "== build $b pair $i $(date +%T)"
    java -jar /tmp/b$b/millrace-bench.jar --level rpc --systems millrace-rpc-futures,millrace --interactions request-stream --sizes 8 --warmup 8 --duration 5 --rounds 1 --skip-heap --skip-latency 2>&1 | grep -E "request-stream|msg/s" | grep -v "^#"
  done
done
# Builds: /tmp/bA = 86ff19c (before), /tmp/bB = the build under test (ab1: ResponseSink's demand
# taken at once and LoopDrain's read before its CAS; ab2: the same with OutboundSink's array queue;
# ab3, ab4: the final change, after the review's fix). Each is millrace-bench/target/{millrace-bench.jar,
# millrace-bench-classes.jar,lib} of a `./mvnw -q -B package -Dmaven.test.skip=true -o` build.

#!/usr/bin/env python3
"""Lists Millrace methods that C2 refused to inline for "unloaded signature classes".

Usage: run bench processes with
  --client-jvm-opts="-XX:+UnlockDiagnosticVMOptions -XX:+PrintInlining -XX:+LogVMOutput \
      -XX:-DisplayVMOutput -XX:LogFile=/tmp/scan/<system>-c-%p.log" (and --server-jvm-opts alike),
then: python3 c2-unloaded-signatures.py /tmp/scan/*.log

A block of inlining output counts as C2's when it shows "(hot)" or "(intrinsic)", which only C2
prints; C1's refusals are left out (C1 code is replaced).
"""
import collections
import sys

counts = collections.Counter()
where = collections.defaultdict(set)
for path in sys.argv[1:]:
    blocks, current = [], []
    for line in open(path, errors="replace"):
        if line.startswith("<writer") or not line.startswith(" "):
            if current:
                blocks.append(current)
                current = []
            continue
        current.append(line)
    if current:
        blocks.append(current)
    for block in blocks:
        if not any("(hot)" in l or "(intrinsic)" in l for l in block):
            continue
        for l in block:
            if "unloaded signature classes" in l:
                method = l.split("@")[1].split()[1]
                if "millrace" in method:
                    counts[method] += 1
                    where[method].add(path.split("/")[-1].rsplit("-", 1)[0])
for method, n in counts.most_common():
    print(n, method, "|", ", ".join(sorted(where[method])))

#!/bin/bash
# Per-thread CPU of the measured processes (serve/drive) over 4 s of each measured window, grouped by thread name.
# usage: thrcpu.sh <bench args...>
(java -jar /work/main/millrace-bench/target/millrace-bench.jar "$@" 2>&1 | grep -E "^\[|%   GC") &
snap() { # pid -> "name ticks" lines
  for t in /proc/$1/task/*; do
    [ -r $t/stat ] || continue
    comm=$(cat $t/comm 2>/dev/null | sed 's/[0-9]\+$/N/; s/ /_/g')
    # utime+stime are fields 14,15 after the comm; comm may contain spaces: strip up to ") "
    rest=$(sed 's/^.*) //' $t/stat 2>/dev/null)
    echo "$comm $(echo $rest | awk '{print $12+$13}')"
  done | awk '{a[$1]+=$2} END{for(k in a) print k, a[k]}' | sort
}
seen=""
for i in $(seq 1 120); do
  for p in $(pgrep -f "BenchMain|millrace-bench"); do
    r=$(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null | grep -oE ' drive ')
    [ -z "$r" ] && continue
    case " $seen " in *" $p "*) continue;; esac
    seen="$seen $p"
    heap=$(tr '\0' ' ' < /proc/$p/cmdline | grep -oE -- '-Xmx[0-9a-z]+' | head -1)
    srv=$(pgrep -f " serve " | head -1)
    sleep 11
    a=$(snap $p); as=$(snap $srv); sleep 4; b=$(snap $p); bs=$(snap $srv)
    echo "--- client $heap (pid $p), CPU % of one core over 4 s by thread:"
    join <(echo "$a") <(echo "$b") | awk '{d=($3-$2)/4; if (d>0) printf "  %-28s %5.1f %%\n", $1, d}' | sort -k2 -nr | head -12
    echo "--- server $heap (pid $srv):"
    join <(echo "$as") <(echo "$bs") | awk '{d=($3-$2)/4; if (d>0) printf "  %-28s %5.1f %%\n", $1, d}' | sort -k2 -nr | head -12
  done
  sleep 1
  pgrep -f "millrace-bench.jar" >/dev/null || break
done
wait

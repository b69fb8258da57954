#!/usr/bin/env bash
# How closely --memory-limit holds a run that grows fast, and how fast a wrong schedule ends.
# First: runs bench/limits/*.sched into a
# limit and prints, for each, the limit, the figure in the run's message and the process's
# peak resident memory (GNU time's %M), in MiB, with the exit status (6: stopped at the
# limit). Usage: bench/limits.sh [BUILD] (default build/).
set -euo pipefail
cd "$(dirname "$0")/.."
schedc="${1:-build}/bin/schedc"
printf '%-34s %8s %8s %8s %6s %5s\n' input limit message peak over exit
run() { # NAME LIMIT ARGS...
  local name=$1 limit=$2
  shift 2
  local out status peak said
  out=$(mktemp)
  set +e
  /usr/bin/time -f '%M' -o "$out.time" "$schedc" check "$@" --memory-limit="$limit" > "$out" 2>&1
  status=$?
  set -e
  peak=$(( $(tail -1 "$out.time") / 1024 ))
  said=$(grep -o 'the run holds [0-9]* MiB' "$out" | grep -o '[0-9]*' | head -1 || true)
  printf '%-34s %8s %8s %8s %5s%% %5s\n' "$name" "$limit" "${said:--}" "$peak" \
    "$(( (peak - limit) * 100 / limit ))" "$status"
  rm -f "$out" "$out.time"
}
for limit in 500 2000; do
  run "grow_sets (800 KB a statement)" "$limit" bench/limits/grow_sets.sched
done
run "grow_sets (24 MB a statement)" 1000 bench/limits/grow_sets.sched -D batches=3000000
for threads in 1 2 8; do
  run "grow_ranks --threads=$threads" 1000 bench/limits/grow_ranks.sched --threads=$threads
done

# How fast a wrong schedule ends: the issue-44 reproducers, wall seconds and peak MiB. Each
# must end with its error (exit 1) on any number of threads.
printf '\n%-52s %8s %8s %5s\n' input seconds peak exit
timed() { # NAME ARGS...
  local name=$1 out status
  shift
  out=$(mktemp)
  set +e
  /usr/bin/time -f '%e %M' -o "$out.time" timeout 60 "$schedc" check "$@" > /dev/null 2>&1
  status=$?
  set -e
  read -r seconds peak < <(tail -1 "$out.time")
  printf '%-52s %8s %8s %5s\n' "$name" "$seconds" "$((peak / 1024))" "$status"
  rm -f "$out" "$out.time"
}
faults=test/lit/driver/Inputs/pipeline_faults.sched
for threads in 1 2 8; do
  for fault in 1 2 3 4 5; do
    timed "pipeline_faults fault=$fault --threads=$threads" "$faults" -D fault=$fault --threads=$threads
  done
done
nocool=$(mktemp --suffix=.sched)
grep -v 'for mb in batches - warmup' stdlib/1f1b.sched > "$nocool"
timed "1f1b without cooldown, 128 ranks, default threads" "$nocool" -D ranks=128 -D layers=256 -D batches=256
rm -f "$nocool"

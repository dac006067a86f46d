#!/usr/bin/env bash
# How the diagnosis's cost grows with the threads parked: for each count, a fresh Release server (2 processors, the pool's
# minimum raised above the count so it grows at once) with that many taskrunwait requests held for a minute, whose
# Task.Run delegates park as many pool threads in MockDatabase.Query; then the CLI's `stacks -p` (a process of its own),
# the app's own capture (POST /api/threadpool/stacks), and a heap dump (`dotnet-dump collect --type Heap`) read by
# `stacks FILE`, several times each. Prints each run and, per count, the medians, peak memory and the dump's size.
# Usage: scripts/scale-benchmark.sh [runs=3] [counts="150 500 1000"]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/server-common.sh
runs=${1:-3}
counts=${2:-150 500 1000}
build_release
work=$(mktemp -d)
app=""
load=""
trap 'kill $app $load 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
rss() { awk -v k="$1:" '$1 == k {print $2}' "/proc/$app/status"; }
threads() { awk '/^Threads:/ {print $2}' "/proc/$app/status"; }

# One line per run: source, wall ms, capture ms, analysis ms, peak KB, pool threads, top group's threads.
summarize() {
  python3 - "$@" <<'PY'
import json, sys
source, start, end, peak, path = sys.argv[1:6]
s = json.load(open(path))
s = s.get("snapshot", s)
top = max((g for g in s["groups"] if g["poolThreads"]), key=lambda g: g["threads"])
print(source, round((float(end) - float(start)) * 1000), s.get("captureMs", 0), s.get("analysisMs", 0), peak, s["poolThreadCount"], top["threads"])
PY
}

for held in $counts; do
  port=$(free_port)
  base="http://127.0.0.1:$port"
  minimum=$(printf '%X' $((held + 50)))
  DOTNET_PROCESSOR_COUNT=2 DOTNET_ThreadPool_ForceMinWorkerThreads=$minimum dotnet "$bin/DiagnosticScenarios.dll" --urls "$base" --StackCapture:Automatic=false >/dev/null 2>&1 &
  app=$!
  wait_until_answering "$base"
  # One request per connection, each held for a minute: the runner's duration ends before any answers.
  dotnet "$runner" run --url "$base/api/diagscenario/taskrunwait?delayMs=60000" -c "$held" -d 2s --timeout 90s >/dev/null 2>&1 &
  load=$!
  for _ in $(seq 300); do [ "$(threads)" -ge "$held" ] && break; sleep 0.1; done
  sleep 2
  results="$work/results-$held"
  : >"$results"
  echo "$held held: $(threads) OS threads, app RSS $(rss VmRSS) KB"
  for _ in $(seq "$runs"); do
    start=$(date +%s.%N)
    /usr/bin/time -f "%M" -o "$work/time" dotnet "$cli" stacks -p "$app" --json --top 1 --requests-window 0s >"$work/s.json"
    summarize cli "$start" "$(date +%s.%N)" "$(cat "$work/time")" "$work/s.json" | tee -a "$results"
  done
  for _ in $(seq "$runs"); do
    start=$(date +%s.%N)
    curl -sf -m 60 -X POST -H 'X-DiagnosticScenarios-Control: 1' "$base/api/threadpool/stacks" >"$work/s.json"
    summarize app "$start" "$(date +%s.%N)" "$(rss VmHWM)" "$work/s.json" | tee -a "$results"
  done
  start=$(date +%s.%N)
  dotnet tool run dotnet-dump -- collect -p "$app" --type Heap -o "$work/core" >/dev/null
  collected=$(python3 -c "import sys; print(round((float(sys.argv[2]) - float(sys.argv[1])) * 1000))" "$start" "$(date +%s.%N)")
  size=$(du -m "$work/core" | cut -f1)
  kill $load $app 2>/dev/null || true
  wait 2>/dev/null || true
  for _ in $(seq "$runs"); do
    start=$(date +%s.%N)
    /usr/bin/time -f "%M" -o "$work/time" dotnet "$cli" stacks "$work/core" --json --top 1 >"$work/s.json"
    summarize dump "$start" "$(date +%s.%N)" "$(cat "$work/time")" "$work/s.json" | tee -a "$results"
  done
  rm -f "$work/core"
  python3 - "$results" "$held" "$collected" "$size" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
for side, label, mem in (("cli", "CLI stacks -p", "CLI peak RSS"), ("app", "in process", "app peak RSS"), ("dump", "stacks DUMP", "CLI peak RSS")):
    r = [x for x in rows if x[0] == side]
    med = lambda i: statistics.median(float(x[i]) for x in r)
    print(f"{sys.argv[2]} held, {label}: median wall {med(1):.0f} ms (capture {med(2):.0f}, analysis {med(3):.0f}), {mem} {max(int(x[4]) for x in r) // 1024} MB, {r[0][5]} pool threads, top group {r[0][6]}")
print(f"{sys.argv[2]} held, dotnet-dump collect --type Heap: {sys.argv[3]} ms, {sys.argv[4]} MB")
PY
done

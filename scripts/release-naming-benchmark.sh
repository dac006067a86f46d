#!/usr/bin/env bash
# How fast dotnet-blocking names the line of a Release build's inlined action under real starvation: a fresh Release
# server (2 processors), taskwait at CONNECTIONS connections from the load runner; once the pool has grown, `stacks` (its
# own process, the request events read beside its snapshot) several times, each timed from its start to its exit; and,
# on another fresh server, `watch` started before the load, timed from the load's start to the report that names the site.
# Usage: scripts/release-naming-benchmark.sh [runs=5] [connections=150]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/server-common.sh
runs=${1:-5}
connections=${2:-150}
build_release
results=$(mktemp)
app=""
load=""
trap 'kill $app $load 2>/dev/null || true; wait 2>/dev/null || true; rm -f "$results" "$results.json"' EXIT

start_app() {
  port=$(free_port)
  base="http://127.0.0.1:$port"
  DOTNET_PROCESSOR_COUNT=2 dotnet "$bin/DiagnosticScenarios.dll" --urls "$base" --StackCapture:Automatic=false >/dev/null 2>&1 &
  app=$!
  wait_until_answering "$base"
}

start_load() {
  dotnet "$runner" run --url "$base/api/diagscenario/taskwait" -c "$connections" -d "$1" --timeout 60s >/dev/null 2>&1 &
  load=$!
}

start_app
start_load 120s
# The pool grows by the runtime's cooperative blocking until it holds a thread per connection or so.
for _ in $(seq 300); do
  threads=$(awk '/^Threads:/ {print $2}' "/proc/$app/status")
  [ "$threads" -ge "$connections" ] && break
  sleep 0.1
done
echo "app: $(awk '/^Threads:/ {print $2}' "/proc/$app/status") OS threads under taskwait at $connections connections"
for _ in $(seq "$runs"); do
  begin=$(date +%s.%N)
  dotnet "$cli" stacks -p "$app" --json --top 1 >"$results.json"
  end=$(date +%s.%N)
  python3 - "$begin" "$end" "$results.json" >>"$results" <<'PY'
import json, sys
s = json.load(open(sys.argv[3]))
site = [g for g in s["groups"] if g["poolThreads"] and g.get("blocking")][0]
frames = site["appFrames"]
named = ", ".join(f'{f["method"]}@{f["source"]["fileName"]}:{f["source"]["line"]}' for f in frames if f.get("source")) or "no line"
print("stacks", round((float(sys.argv[2]) - float(sys.argv[1])) * 1000), s["captureMs"], s["requestsMs"], s["analysisMs"], s["poolThreadCount"], site["threads"], named.replace(" ", "_"))
PY
  tail -n1 "$results"
done
kill $load $app 2>/dev/null || true
wait 2>/dev/null || true

for _ in $(seq "$runs"); do
  start_app
  dotnet "$cli" watch -p "$app" --json --top 1 --timeout 60s >"$results.json" 2>/dev/null &
  watch=$!
  sleep 2
  begin=$(date +%s.%N)
  start_load 30s
  wait $watch || true
  end=$(date +%s.%N)
  python3 - "$begin" "$end" "$results.json" >>"$results" <<'PY'
import json, sys
w = json.load(open(sys.argv[3]))
s = w.get("snapshot") or {}
sites = [g for g in s.get("groups", []) if g["poolThreads"] and g.get("blocking")]
frames = sites[0]["appFrames"] if sites else []
named = ", ".join(f'{f["method"]}@{f["source"]["fileName"]}:{f["source"]["line"]}' for f in frames if f.get("source")) or "no line"
print("watch", round((float(sys.argv[2]) - float(sys.argv[1])) * 1000), w["starved"], named.replace(" ", "_"))
PY
  tail -n1 "$results"
  kill $load $app 2>/dev/null || true
  wait 2>/dev/null || true
done

python3 - "$results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
s = [r for r in rows if r[0] == "stacks"]
w = [r for r in rows if r[0] == "watch"]
med = lambda rs, i: statistics.median(float(r[i]) for r in rs)
print(f"stacks (Release, inlined, its own process): median wall {med(s, 1):.0f} ms (max {max(float(r[1]) for r in s):.0f}), "
      f"capture {med(s, 2):.0f} ms, request events {med(s, 3):.0f} ms, analysis {med(s, 4):.0f} ms, {s[0][5]} pool threads, top site {s[0][7]}")
print(f"watch: load start to the named site, median {med(w, 1):.0f} ms (max {max(float(r[1]) for r in w):.0f}), top site {w[0][3]}")
PY

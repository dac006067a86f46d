#!/usr/bin/env bash
# The cost of a grouped stack snapshot with ~150 threads, source lines resolved: a fresh Release server (2 processors,
# 200 min worker threads so the pool grows at once) with 150 requests of taskrunwait, whose Task.Run delegates park 150
# pool threads in MockDatabase.Query, frames the JIT keeps (each app frame's file and line is read from the PDB); then the
# CLI's `stacks --json` (another process) and the app's own capture (POST /api/threadpool/stacks, an EventPipe session on
# itself, recorded by a child process of the app and analysed in it) several times each. Prints each run, the medians, the CLI's peak RSS and the app's RSS before and its peak after.
# Usage: scripts/stacks-benchmark.sh [runs=5] [held=150] [scenario=taskrunwait]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/server-common.sh
runs=${1:-5}
held=${2:-150}
scenario=${3:-taskrunwait}
dotnet build -c Release -v q -nologo src/DiagnosticScenarios >/dev/null
dotnet build -c Release -v q -nologo src/dotnet-blocking >/dev/null
bin=src/DiagnosticScenarios/bin/Release/net10.0
cli=src/dotnet-blocking/bin/Release/net10.0/dotnet-blocking.dll
port=$(free_port)
base="http://127.0.0.1:$port"
results=$(mktemp)

# Hexadecimal, as the runtime reads it: C8 = 200 threads.
DOTNET_PROCESSOR_COUNT=2 DOTNET_ThreadPool_ForceMinWorkerThreads=C8 dotnet "$bin/DiagnosticScenarios.dll" --urls "$base" >/dev/null 2>&1 &
app=$!
trap 'kill $app 2>/dev/null || true; wait 2>/dev/null || true; rm -f "$results" "$results.json" "$results.time"' EXIT
wait_until_answering "$base"

# The held requests end by themselves after 60 s at the latest, or when the app is killed.
for _ in $(seq "$held"); do curl -s -m 70 "$base/api/diagscenario/$scenario?delayMs=60000" >/dev/null & done
for _ in $(seq 100); do
  threads=$(awk '/^Threads:/ {print $2}' "/proc/$app/status")
  [ "$threads" -ge "$held" ] && break
  sleep 0.1
done
sleep 1
rss() { awk -v k="$1:" '$1 == k {print $2}' "/proc/$app/status"; }
echo "app: $(awk '/^Threads:/ {print $2}' "/proc/$app/status") OS threads, RSS $(rss VmRSS) KB before the captures"

for i in $(seq "$runs"); do
  start=$(date +%s.%N)
  /usr/bin/time -f "%M" -o "$results.time" dotnet "$cli" stacks -p "$app" --json --top 1 --requests-window 0s >"$results.json"
  end=$(date +%s.%N)
  # The snapshot goes by file: with every stack in it, it is longer than one command-line argument may be.
  python3 - cli "$start" "$end" "$(cat "$results.time")" "$results.json" >>"$results" <<'PY'
import json, sys
s = json.load(open(sys.argv[5]))
g = s["groups"][0]
a = g["appFrame"]
print(sys.argv[1], round((float(sys.argv[3]) - float(sys.argv[2])) * 1000), s["captureMs"], s["analysisMs"], sys.argv[4], s["threadCount"], s["poolThreadCount"], g["threads"], f'{a["method"]}@{a["source"]["fileName"]}:{a["source"]["line"]}' if a and a["source"] else a and a["method"])
PY
  tail -n1 "$results"
done

for i in $(seq "$runs"); do
  start=$(date +%s.%N)
  curl -sf -m 30 -X POST -H 'X-DiagnosticScenarios-Control: 1' "$base/api/threadpool/stacks" >"$results.json"
  end=$(date +%s.%N)
  python3 - app "$start" "$end" "$(rss VmHWM)" "$results.json" >>"$results" <<'PY'
import json, sys
s = json.load(open(sys.argv[5]))["snapshot"]
g = s["groups"][0]
a = g["appFrame"]
print(sys.argv[1], round((float(sys.argv[3]) - float(sys.argv[2])) * 1000), s["captureMs"], s["analysisMs"], sys.argv[4], s["threadCount"], s["poolThreadCount"], g["threads"], f'{a["method"]}@{a["source"]["fileName"]}:{a["source"]["line"]}' if a and a["source"] else a and a["method"])
PY
  tail -n1 "$results"
done

echo "app: RSS $(rss VmRSS) KB after, peak (VmHWM) $(rss VmHWM) KB"
python3 - "$results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
for side, label in (("cli", "CLI stacks -p (own process)"), ("app", "POST /api/threadpool/stacks (the app's own, recorded by its child)")):
    r = [x for x in rows if x[0] == side]
    med = lambda i: statistics.median(float(x[i]) for x in r)
    mem = "CLI peak RSS" if side == "cli" else "app peak RSS so far"
    print(f"{label}: median wall {med(1):.0f} ms, capture {med(2):.0f} ms, analysis {med(3):.0f} ms, {mem} {max(int(x[4]) for x in r)} KB, "
          f"{r[0][5]} managed threads, {r[0][6]} pool, top group {r[0][7]} x {r[0][8]}")
PY

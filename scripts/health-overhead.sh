#!/usr/bin/env bash
# The cost of the thread-pool health feature: taskasyncwait at 125 connections for 10 s, with
# ThreadPoolHealth:Enabled true vs false, each run on a fresh server (2 processors), alternating on/off
# so machine drift hits both sides. Prints one line per run and the median of each side.
# Usage: scripts/health-overhead.sh [pairs=3] [duration=10s] [delayMs=500]
# delayMs=0 takes the 500 ms query away, so the per-request cost of the middleware is what limits.
# SWITCH=MetricsExport__Enabled flips the metrics export alone instead of the whole health feature; SCRAPE=1 scrapes
# the live page's /metrics once a second on both sides while the load runs, as Prometheus would (the off side answers 404).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/server-common.sh
pairs=${1:-3}
duration=${2:-10s}
delay=${3:-500}
dotnet build -c Release -v q -nologo src/DiagnosticScenarios >/dev/null
dotnet build -c Release -v q -nologo src/DiagnosticScenarios.LoadRunner >/dev/null
bin=src/DiagnosticScenarios/bin/Release/net10.0
runner=src/DiagnosticScenarios.LoadRunner/bin/Release/net10.0/DiagnosticScenarios.LoadRunner.dll
port=$(free_port)
url="http://127.0.0.1:$port/api/diagscenario/taskasyncwait?delayMs=$delay"
results=$(mktemp)

switch=${SWITCH:-ThreadPoolHealth__Enabled}

run() { # $1 = true|false
  local live_page scraper=""
  live_page=$(free_port)
  env DOTNET_PROCESSOR_COUNT=2 "$switch=$1" LivePage__Port="$live_page" dotnet "$bin/DiagnosticScenarios.dll" --urls "http://127.0.0.1:$port" --contentRoot "$PWD/src/DiagnosticScenarios" >/dev/null 2>&1 &
  local pid=$!
  wait_until_answering "http://127.0.0.1:$port" || { kill "$pid"; exit 1; }
  local json
  if [[ -n "${SCRAPE:-}" ]]; then scrape_every_second "$live_page" & scraper=$!; fi
  json=$(dotnet "$runner" run --url "$url" -c 125 -d "$duration" --json 2>/dev/null)
  if [[ -n "$scraper" ]]; then kill "$scraper"; wait "$scraper" 2>/dev/null || true; fi
  kill "$pid"; wait "$pid" 2>/dev/null || true
  python3 - "$1" "$json" >>"$results" <<'PY'
import json, sys
r = json.loads(sys.argv[2])
print(sys.argv[1], round(r["requestsPerSecond"], 2), round(r["latency"]["average"], 1), round(r["latency"]["p99"], 1), r["completed"])
PY
  tail -n1 "$results" | awk -v switch="$switch" '{printf "%s=%-5s %8s req/s  avg %7s ms  p99 %7s ms  %s completed\n", switch, $1, $2, $3, $4, $5}'
}

for _ in $(seq "$pairs"); do run true; run false; done
python3 - "$results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
side = {s: [r for r in rows if r[0] == s] for s in ("true", "false")}
med = {s: (statistics.median(float(r[1]) for r in v), statistics.median(float(r[2]) for r in v)) for s, v in side.items()}
on, off = med["true"], med["false"]
print(f"median on : {on[0]:.2f} req/s, avg {on[1]:.1f} ms")
print(f"median off: {off[0]:.2f} req/s, avg {off[1]:.1f} ms")
print(f"on vs off : throughput {100 * (on[0] / off[0] - 1):+.2f} %, latency {100 * (on[1] / off[1] - 1):+.2f} %")
PY

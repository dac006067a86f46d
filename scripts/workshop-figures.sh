#!/usr/bin/env bash
# The figures docs/workshop.md quotes for its load steps, measured as a reader of it would see them: for each step a fresh
# Release app on 2 processors at the workshop's addresses (http://localhost:5000, the page's server on :5002), the load
# runner's `run` as the step gives it (125 connections, 30 s, --timeout 90s), and the page's GET /api/threadpool read once
# a second meanwhile. Prints the runner's summary, the thread count 5, 10, 20 and 30 s in, the injections by reason, the
# worst queue delay and the endpoint's hold time.
#
# usage: scripts/workshop-figures.sh [taskwait] [tasksleepwait] [minthreads] [taskasyncwait]   (default: all four)
#   minthreads is step 9: tasksleepwait after PUT /api/threadpool/minthreads?workers=200.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(taskwait tasksleepwait minthreads taskasyncwait)
for step in "${steps[@]}"; do
  case "$step" in taskwait|tasksleepwait|minthreads|taskasyncwait) ;; *) echo "unknown step: $step" >&2; exit 2 ;; esac
done
command -v jq >/dev/null || { echo "needs jq (apt-get install jq)" >&2; exit 2; }

dotnet build src/DiagnosticScenarios -c Release -v quiet -nologo >/dev/null
runner=src/DiagnosticScenarios.LoadRunner/bin/Release/net10.0/DiagnosticScenarios.LoadRunner.dll
app=src/DiagnosticScenarios/bin/Release/net10.0/DiagnosticScenarios
work=$(mktemp -d)
server=
cleanup() { [ -z "$server" ] || kill "$server" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

for step in "${steps[@]}"; do
  scenario=$step
  [ "$step" != minthreads ] || scenario=tasksleepwait
  DOTNET_PROCESSOR_COUNT=2 "$app" >"$work/app.log" 2>&1 &
  server=$!
  for _ in $(seq 1 100); do curl -sf -o /dev/null http://localhost:5000/api/diagscenario/ping && break; sleep 0.1; done
  if [ "$step" = minthreads ]; then
    curl -sf -X PUT -H 'X-DiagnosticScenarios-Control: 1' 'http://localhost:5000/api/threadpool/minthreads?workers=200' >/dev/null
  fi

  : >"$work/samples"
  ( start=$(date +%s.%N)
    while true; do
      curl -s --max-time 1 http://localhost:5002/api/threadpool |
        jq -c --arg t "$(echo "$(date +%s.%N) - $start" | bc)" '{t: ($t|tonumber), threads: .threadCount, delay: .queueDelay.window.maxMs, pending: .queueDelay.pendingMs, injections, endpoints}' >>"$work/samples" || true
      sleep 1
    done ) &
  sampler=$!
  dotnet "$runner" run --url "http://localhost:5000/api/diagscenario/$scenario" -c 125 -d 30s --timeout 90s --json >"$work/run.json" 2>/dev/null
  kill "$sampler" 2>/dev/null || true
  wait "$sampler" 2>/dev/null || true

  echo "== $step (diagscenario/$scenario, 125 connections, 30 s)"
  jq -r '"runner: \(.requestsPerSecond*100|round/100) req/s, average \(.latency.average|round) ms, max \(.latency.max|round) ms, \(.completed) answers of \(.sent), \(.timeouts) timeouts, elapsed \(.elapsed)"' "$work/run.json" 2>/dev/null || cat "$work/run.json"
  for at in 5 10 20 30 40 50; do
    jq -r --argjson at "$at" 'select(.t >= $at) | "threads \($at) s in: \(.threads)"' "$work/samples" | head -1
  done
  jq -s -r '"injections at the end: starvation \(.[-1].injections.starvation), cooperative blocking \(.[-1].injections.cooperativeBlocking); worst queue delay \([.[] | .delay, .pending] | max) ms; threads at most \([.[].threads] | max)"' "$work/samples"
  jq -s -r --arg r "/api/diagscenario/$scenario" '[.[].endpoints[]? | select(.route == $r)] | last | if . == null then "no endpoint figures" else "hold time p50 \(.holdTime.p50Ms) ms, p95 \(.holdTime.p95Ms) ms" end' "$work/samples"

  kill "$server"
  wait "$server" 2>/dev/null || true
  server=
done

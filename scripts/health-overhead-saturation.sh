#!/usr/bin/env bash
# The cost of the thread-pool health feature at saturation: wrk on `ping` (no query, so the per-request
# cost of the attribution is what limits), ThreadPoolHealth:Enabled true vs false, each run on a fresh
# server (2 processors), in pairs, on then off and off then on by turns, so machine drift hits both sides. Prints one line per run, the
# median of each side and the median of the pairs' on/off ratios: throughput, and the server's CPU time per
# request (user + system, from /proc/PID/stat), which other work on a shared machine disturbs less, and the share
# of the server's CPU its detection threads took (the probe and the sampler, by thread name, from /proc/PID/task).
# Usage: scripts/health-overhead-saturation.sh [pairs=3] [duration=10s] [connections=64]
# APP_DIR=path runs an app already built there instead of building Release.
# SWITCH=MetricsExport__Enabled flips the metrics export alone instead of the whole health feature; SCRAPE=1 scrapes
# the live page's /metrics once a second on both sides while the load runs, as Prometheus would (the off side answers 404).
# BURSTS=N runs both servers at once and loads them by turns, N pairs of loads of the duration argument each (say
# BURSTS=60 with 2s), instead of a fresh server for every run; ROUNDS=R (4) starts a new pair of servers R times, in
# either order by turns. SWITCH=Unused__Setting (a setting the app does not read) measures the method's own noise: two
# identical servers.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/server-common.sh
pairs=${1:-3}
duration=${2:-10s}
connections=${3:-64}
command -v wrk >/dev/null || { echo "wrk is not installed" >&2; exit 1; }
if [[ -z "${APP_DIR:-}" ]]; then
  dotnet build -c Release -v q -nologo src/DiagnosticScenarios >/dev/null
  APP_DIR=src/DiagnosticScenarios/bin/Release/net10.0
fi
results=$(mktemp)

cpu_ticks() { # user + system clock ticks of process $1
  awk '{print $14 + $15}' "/proc/$1/stat"
}

detection_ticks() { # user + system clock ticks of process $1's detection threads (names cut to 15 characters by the kernel)
  local total=0 t
  for t in /proc/"$1"/task/*; do
    if [[ "$(cat "$t/comm" 2>/dev/null)" == ThreadPoolHealt* ]]; then
      # Fields after the parenthesised name: utime and stime are the 12th and 13th.
      total=$((total + $(sed 's/.*) //' "$t/stat" | awk '{print $12 + $13}')))
    fi
  done
  echo "$total"
}

switch=${SWITCH:-ThreadPoolHealth__Enabled}

# Starts a server with the switch at $1 (true|false) on a port of its own, warms it up, and sets pid_$1, url_$1 and, with
# SCRAPE, scraper_$1.
start() {
  local port live_page pid
  port=$(free_port)
  live_page=$(free_port)
  env DOTNET_PROCESSOR_COUNT=2 "$switch=$1" LivePage__Port="$live_page" dotnet "$APP_DIR/DiagnosticScenarios.dll" --urls "http://127.0.0.1:$port" --contentRoot "$PWD/src/DiagnosticScenarios" >/dev/null 2>&1 &
  pid=$!
  wait_until_answering "http://127.0.0.1:$port" || { kill "$pid"; exit 1; }
  printf -v "pid_$1" '%s' "$pid"
  printf -v "url_$1" '%s' "http://127.0.0.1:$port/api/diagscenario/ping"
  # A warm-up so both sides are measured after JIT and connection set-up: a shorter one leaves tiered compilation still
  # busy in the measured run.
  wrk -t 2 -c "$connections" -d 5s "http://127.0.0.1:$port/api/diagscenario/ping" >/dev/null
  if [[ -n "${SCRAPE:-}" ]]; then scrape_every_second "$live_page" & printf -v "scraper_$1" '%s' "$!"; fi
}

stop() { # $1 = true|false
  local scraper="scraper_$1" pid="pid_$1"
  if [[ -n "${!scraper:-}" ]]; then kill "${!scraper}"; wait "${!scraper}" 2>/dev/null || true; fi
  kill "${!pid}"; wait "${!pid}" 2>/dev/null || true
}

measure() { # $1 = true|false, $2 = how long: one load of the started server with the switch at $1
  local pid="pid_$1" url="url_$1"
  local before after detection_before detection_after out rps requests cpu_us detection_pct
  before=$(cpu_ticks "${!pid}")
  detection_before=$(detection_ticks "${!pid}")
  out=$(wrk -t 2 -c "$connections" -d "$2" "${!url}")
  after=$(cpu_ticks "${!pid}")
  detection_after=$(detection_ticks "${!pid}")
  rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
  requests=$(awk '/requests in/ {print $1}' <<<"$out")
  cpu_us=$(python3 -c "print(round(($after - $before) * 1e6 / $(getconf CLK_TCK) / $requests, 2))")
  detection_pct=$(python3 -c "print(round(100 * ($detection_after - $detection_before) / max(1, $after - $before), 2))")
  echo "$1 $rps $cpu_us" >>"$results"
  printf '%s=%-5s %10s req/s  %6s us CPU per request  detection threads %5s %% of its CPU\n' "$switch" "$1" "$rps" "$cpu_us" "$detection_pct"
}

run() { # $1 = true|false: a fresh server, measured once
  start "$1"
  measure "$1" "$duration"
  stop "$1"
}

if [[ -n "${BURSTS:-}" ]]; then
  # Both servers at once, each started and warmed once a round, then pairs of short loads (the duration argument each,
  # say 2s), one server and the other by turns: the machine's drift, which moves a whole run on a shared machine by more
  # than the cost measured, has seconds, not a minute, to come between the two sides of a pair. The idle server's own
  # threads (its sampler and probe, its scrape) run on both sides alike. $BURSTS pairs in ROUNDS rounds (4 by default),
  # each on a new pair of servers started in the other order than the round before: a server's place in the start order
  # (which one's threads, memory and ports come first) weighs on both sides alike.
  rounds=${ROUNDS:-4}
  for round in $(seq "$rounds"); do
    if (( round % 2 )); then start true; start false; else start false; start true; fi
    for i in $(seq $(( (BURSTS * round / rounds) - (BURSTS * (round - 1) / rounds) ))); do
      if (( i % 2 )); then measure true "$duration"; measure false "$duration"; else measure false "$duration"; measure true "$duration"; fi
    done
    stop true
    stop false
  done
else
  # Each pair's two runs follow each other; every other pair starts with the off side, so a run's place in its pair
  # (say, the first after a pause) weighs on both sides alike.
  for i in $(seq "$pairs"); do
    if (( i % 2 )); then run true; run false; else run false; run true; fi
  done
fi
python3 - "$results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
med = {s: [statistics.median(float(r[i]) for r in rows if r[0] == s) for i in (1, 2)] for s in ("true", "false")}
on, off = med["true"], med["false"]
print(f"median on : {on[0]:.0f} req/s, {on[1]:.2f} us CPU per request")
print(f"median off: {off[0]:.0f} req/s, {off[1]:.2f} us CPU per request")
print(f"on vs off : throughput {100 * (on[0] / off[0] - 1):+.2f} %, CPU per request {100 * (on[1] / off[1] - 1):+.2f} %")
# Each pair shares the machine's state of the moment, so its ratio is the steadier figure.
pairs = list(zip([r for r in rows if r[0] == "true"], [r for r in rows if r[0] == "false"]))
ratio = [statistics.median(float(on[i]) / float(off[i]) for on, off in pairs) for i in (1, 2)]
print(f"per pair  : throughput {100 * (ratio[0] - 1):+.2f} %, CPU per request {100 * (ratio[1] - 1):+.2f} % (medians of the on/off ratios)")
if len(pairs) >= 4:
    # How far single pairs spread: the middle half of the pairs' CPU ratios.
    q = statistics.quantiles([float(on[2]) / float(off[2]) for on, off in pairs], n=4)
    print(f"spread    : CPU per request, the middle half of the pairs from {100 * (q[0] - 1):+.2f} % to {100 * (q[2] - 1):+.2f} %")
PY

#!/usr/bin/env bash
# Loads one scenario of a running DiagnosticScenarios server with the first load tool found:
# bombardier, hey, siege, wrk, else the project's own runner. LOAD_TOOL=<name> picks one; BASE_URL
# (default http://localhost:5000) points at the server (`dotnet run --project src/DiagnosticScenarios`); THINK_TIME
# (seconds, e.g. 0.2, as the SQL article's siege -d 0.2) makes each client pause a random time up to it between requests.
set -euo pipefail

usage() {
  echo "usage: $(basename "$0") SCENARIO [connections=125] [duration=10s]" >&2
  echo "  SCENARIO: a mock scenario (taskwait, tasksleepwait, taskasyncwait, ...) or a path (/api/sqlscenario/async)" >&2
  echo "  env: BASE_URL (default http://localhost:5000), LOAD_TOOL (bombardier|hey|siege|wrk|runner)," >&2
  echo "       THINK_TIME (seconds, e.g. 0.2: a random pause up to it between requests; siege or the runner)" >&2
  exit 2
}

[ $# -ge 1 ] && [ $# -le 3 ] || usage
case "$1" in -h|--help) usage ;; esac

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
scenario="$1"
connections="${2:-125}"
duration="${3:-10s}"
base="${BASE_URL:-http://localhost:5000}"
while [ "${base%/}" != "$base" ]; do base="${base%/}"; done   # http://localhost:5000/ would make every path //api/...
think="${THINK_TIME:-}"

[[ "$connections" =~ ^[1-9][0-9]*$ ]] || { echo "connections must be a positive whole number, not '$connections'" >&2; usage; }
[[ "$duration" =~ ^[1-9][0-9]*[smh]?$ ]] || { echo "duration must look like 10s, 2m or 30, not '$duration'" >&2; usage; }
[[ -z "$think" || "$think" =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "THINK_TIME must be seconds such as 0.2, not '$think'" >&2; usage; }
case "$scenario" in
  /*) url="$base$scenario" ;;
  *) url="$base/api/diagscenario/$scenario" ;;
esac

# Before any load: does the app answer at all, and, for a scenario given by name, is it one of the app's? One GET of the
# app's catalogue, which touches no scenario, so the pool the load meets is still cold. (Without curl, the tool finds out.)
if command -v curl >/dev/null 2>&1; then
  answer=$(curl -s --max-time 5 -w '\n%{http_code}' "$base/api/scenarios" || true)
  code="${answer##*$'\n'}"
  if [ "$code" = 000 ]; then
    echo "Nothing answers at $base: start the app (dotnet run -c Release --project src/DiagnosticScenarios), or set BASE_URL to where it listens." >&2
    exit 1
  fi
  if [ "$code" != 200 ] && [ "${scenario:0:1}" != / ]; then
    echo "No DiagnosticScenarios catalogue at $base/api/scenarios ($code): is BASE_URL the app's address? A path (/api/...) loads any app." >&2
    exit 2
  fi
  if [ "$code" = 200 ] && [ "${scenario:0:1}" != / ] && ! grep -q "\"route\":\"/api/diagscenario/${scenario%%\?*}\"" <<<"$answer"; then
    known=$(grep -o '"route":"/api/diagscenario/[^"/{]*"' <<<"$answer" | cut -d'"' -f4 | sed 's|/api/diagscenario/||' | tr '\n' ' ')
    echo "The app at $base has no scenario '$scenario' in /api/diagscenario/; it has: ${known% }. Give another family's by its path, e.g. /api/sqlscenario/async." >&2
    exit 2
  fi
fi

# siege wants seconds; the others take 10s / 2m as they are.
seconds="${duration%[smh]}"
case "$duration" in *m) seconds=$((seconds * 60)) ;; *h) seconds=$((seconds * 3600)) ;; esac
case "$duration" in *[smh]) ;; *) duration="${duration}s" ;; esac

# Every connection is a file descriptor on both ends; 5000 connections need more than the usual 1024.
needed=$((connections + 256))
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt "$needed" ]; then
  ulimit -n "$needed" 2>/dev/null || echo "warning: ulimit -n is $(ulimit -n), below $needed; raise it for $connections connections" >&2
fi

tool="${LOAD_TOOL:-}"
if [ -z "$tool" ]; then
  # bombardier, hey and wrk send back to back; only siege (-d) and the runner (--think-time) pause between requests.
  candidates="bombardier hey siege wrk"
  [ -n "$think" ] && candidates="siege"
  for candidate in $candidates; do
    if command -v "$candidate" >/dev/null 2>&1; then tool="$candidate"; break; fi
  done
  tool="${tool:-runner}"
fi

case "$tool" in
  bombardier|hey|wrk) [ -z "$think" ] || { echo "$tool cannot pause between requests; THINK_TIME needs LOAD_TOOL=siege or runner" >&2; exit 2; } ;;
esac

echo "$tool: $connections connections for $duration against $url${think:+, a random pause up to ${think} s between requests}" >&2
case "$tool" in
  bombardier) exec bombardier -c "$connections" -d "$duration" -l "$url" ;;
  hey) exec hey -c "$connections" -z "$duration" "$url" ;;
  siege)
    # siege has been seen to hang once its -t time is up (JoeDog/siege#66): 2 s later an interrupt makes it print its
    # summary and exit as Ctrl+C would, and 2 s after that it is killed. Debian's 4.0.7 also deadlocks there, a worker
    # cancelled inside malloc waiting at its exit for the arena lock it still holds; nothing but the kill ends that one,
    # and it prints no summary.
    pace=(-b); [ -n "$think" ] && pace=(-d "$think")
    status=0
    timeout -s INT -k 2 "$(( seconds + 2 ))" siege "${pace[@]}" -c "$connections" -t "${seconds}S" "$url" || status=$?
    [ "$status" -eq 124 ] && { echo "siege did not stop at ${seconds} s; interrupted 2 s later" >&2; status=0; }
    [ "$status" -eq 137 ] && echo "siege did not stop at ${seconds} s nor when interrupted; killed, so it printed no summary" >&2
    exit "$status" ;;
  wrk) exec wrk -t "$(( connections < 2 ? 1 : 2 ))" -c "$connections" -d "$duration" --latency "$url" ;;
  runner)
    dotnet build "$repo/src/DiagnosticScenarios.LoadRunner" -c Release -v quiet -nologo >/dev/null
    exec "$repo/src/DiagnosticScenarios.LoadRunner/bin/Release/net10.0/DiagnosticScenarios.LoadRunner" run --url "$url" -c "$connections" -d "$duration" ${think:+--think-time "${think}s"} ;;
  *) echo "unknown LOAD_TOOL '$tool'" >&2; usage ;;
esac

#!/usr/bin/env bash
# Whether repeated stack captures keep growing the app: a fresh idle Release server (2 processors) takes N captures in
# a row (POST /api/threadpool/stacks, the page's "Capture now"), and its RSS is printed after each.
# Usage: scripts/capture-memory.sh [captures=25]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/server-common.sh
captures=${1:-25}
dotnet build -c Release -v q -nologo src/DiagnosticScenarios >/dev/null
port=$(free_port)
base="http://127.0.0.1:$port"
DOTNET_PROCESSOR_COUNT=2 dotnet src/DiagnosticScenarios/bin/Release/net10.0/DiagnosticScenarios.dll --urls "$base" >/dev/null 2>&1 &
app=$!
trap 'kill $app 2>/dev/null || true; wait 2>/dev/null || true' EXIT
wait_until_answering "$base"
rss_mb() { awk '/^VmRSS:/ {printf "%.0f", $2 / 1024}' "/proc/$app/status"; }
echo "before: RSS $(rss_mb) MB"
for i in $(seq "$captures"); do
  took=$(curl -sf -o /dev/null -w '%{time_total}' -X POST -H 'X-DiagnosticScenarios-Control: 1' "$base/api/threadpool/stacks")
  echo "capture $i: ${took} s, RSS $(rss_mb) MB"
done

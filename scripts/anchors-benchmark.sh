#!/usr/bin/env bash
# dotnet-blocking beside the .NET team's tools on one starved process: a fresh Release server (2 processors) under
# taskwait at 125 connections; once the pool has grown, one after the other, `dotnet-stack report`, `dotnet-dump collect`
# then `dotnet-dump analyze` with `pstacks` and with `clrstack -all`, `dotnet-blocking stacks -p`, and
# `dotnet-blocking stacks` on that dump. For each: wall time, lines of output, and whether the output names the blocking
# action, its file and line, and the fix.
# Usage: scripts/anchors-benchmark.sh [connections=125]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/server-common.sh
connections=${1:-125}
build_release
work=$(mktemp -d)
app=""
load=""
trap 'kill $app $load 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
port=$(free_port)
base="http://127.0.0.1:$port"
DOTNET_PROCESSOR_COUNT=2 dotnet "$bin/DiagnosticScenarios.dll" --urls "$base" --StackCapture:Automatic=false >/dev/null 2>&1 &
app=$!
wait_until_answering "$base"
dotnet "$runner" run --url "$base/api/diagscenario/taskwait" -c "$connections" -d 120s --timeout 90s >/dev/null 2>&1 &
load=$!
sleep 8

# timed NAME FILE COMMAND...: runs COMMAND with its output to FILE, and prints NAME, its wall time in ms and its lines,
# and whether the output names the action (TaskWait), its line (StarvationScenariosController.cs:NN) and the fix.
timed() {
  local name=$1 out=$2; shift 2
  local start end
  start=$(date +%s%N)
  local status=0
  "$@" >"$out" 2>&1 || status=$?
  end=$(date +%s%N)
  local action=no line=no fix=no
  grep -q "StarvationScenariosController.TaskWait" "$out" && action=yes
  grep -qE "StarvationScenariosController.cs:[0-9]+" "$out" && line=yes
  grep -q "taskasyncwait" "$out" && fix=yes
  [ "$status" -eq 0 ] || name="$name (exit $status)"
  printf '| %s | %d ms | %d | %s | %s | %s |\n' "$name" $(((end - start) / 1000000)) "$(wc -l <"$out")" "$action" "$line" "$fix"
}

echo "| tool | wall time | lines | names the action | its line | the fix |"
echo "|---|---:|---:|:-:|:-:|:-:|"
timed "dotnet-stack report" "$work/stack.out" dotnet tool run dotnet-stack -- report -p "$app"
timed "dotnet-dump collect (heap)" "$work/collect.out" dotnet tool run dotnet-dump -- collect -p "$app" --type Heap -o "$work/core"
timed "dotnet-dump analyze, pstacks" "$work/pstacks.out" dotnet tool run dotnet-dump -- analyze "$work/core" -c pstacks -c exit
timed "dotnet-dump analyze, clrstack -all" "$work/clrstack.out" dotnet tool run dotnet-dump -- analyze "$work/core" -c "clrstack -all" -c exit
timed "dotnet-blocking stacks -p" "$work/blocking.out" dotnet "$cli" stacks -p "$app"
timed "dotnet-blocking stacks DUMP" "$work/blocking-dump.out" dotnet "$cli" stacks "$work/core"
echo "dump: $(du -m "$work/core" | cut -f1) MB"

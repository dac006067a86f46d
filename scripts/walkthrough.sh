#!/usr/bin/env bash
# The commands of the README, the workshop (docs/workshop.md), docs/running.md and docs/dotnet-blocking.md, run as
# written on this clone, in the workshop's order, each followed by a check of what the text says it shows. CI runs it
# after the tests (.ci/run); DocumentedCommandsTests fails when a command of those documents is not run here word for word.
#
# It serves at the documented addresses (http://localhost:5000, https://localhost:5001, the page on :5002), which must be
# free; `dotnet dev-certs https` and the global install of dotnet-blocking go to a throwaway HOME (the NuGet cache stays
# where it is). Ends with "walkthrough: N passed, N failed"; exit 0 only when every check passed.
#
# usage: scripts/walkthrough.sh
set -uo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
work=$(mktemp -d)
export NUGET_PACKAGES="${NUGET_PACKAGES:-$HOME/.nuget/packages}"
export HOME="$work/home" DOTNET_CLI_HOME="$work/home" DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
mkdir -p "$HOME"
control=(-H 'X-DiagnosticScenarios-Control: 1')
passed=0
failed=0
app=

check() { # check NAME COMMAND...: one check, passed when COMMAND succeeds
  local name=$1; shift
  if "$@"; then passed=$((passed + 1)); echo "ok   $name"; else failed=$((failed + 1)); echo "FAIL $name"; fi
}
contains() { grep -q -- "$2" "$1" || { echo "     $1 does not contain: $2"; sed 's/^/     | /' "$1" | tail -20; return 1; }; }

# start LOG COMMAND...: runs a documented `dotnet run` in a process group of its own and waits (up to 5 min, the build
# included) for the log line naming the live page, which the app writes once it listens.
start() {
  local log=$1; shift
  setsid "$@" >"$log" 2>&1 &
  app=$!
  for _ in $(seq 1 3000); do
    grep -q "Live page: http://localhost:5002/" "$log" && return 0
    kill -0 "$app" 2>/dev/null || break
    sleep 0.1
  done
  echo "     the app did not log its live page's address:"; tail -20 "$log" | sed 's/^/     | /'
  return 1
}
# The `dotnet run` and the app it started, stopped as Ctrl+C would stop them: by SIGTERM, which the app handles the same
# way, because a script's background jobs start with SIGINT ignored.
stop() {
  [ -n "$app" ] || return 0
  kill -TERM -- "-$app" 2>/dev/null
  local ended=1
  for _ in $(seq 1 100); do kill -0 "$app" 2>/dev/null || { ended=0; break; }; sleep 0.1; done
  [ "$ended" -eq 0 ] || { echo "     still running 10 s after SIGTERM: killed"; kill -KILL -- "-$app" 2>/dev/null; }
  app=
  return "$ended"
}
cleanup() { stop; rm -rf "$work" "$repo/packages" "$repo/publish" "$repo"/DiagnosticScenarios_*.nettrace "$repo/trace.nettrace"; }
trap cleanup EXIT

for port in 5000 5001 5002; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "walkthrough: port $port is in use; the documented commands serve there" >&2
    echo "walkthrough: 0 passed, 1 failed"
    exit 1
  fi
done

# Waits (up to a minute) for the page's server to show a load run's result.
result() { for _ in $(seq 1 120); do curl -s --max-time 5 http://localhost:5002/api/threadpool/load >"$work/load" && grep -q '"result":{' "$work/load" && return 0; sleep 0.5; done; cat "$work/load"; return 1; }
# The detector's verdict, read from the page's server, which answers while the pool starves.
starved() { for _ in $(seq 1 60); do curl -s --max-time 2 http://localhost:5002/api/threadpool | grep -q '"starved":true' && return 0; sleep 0.5; done; return 1; }
# A GET's body to FILE and its time in seconds on stdout.
timed_get() { curl -s -o "$2" -w '%{time_total}' --max-time 30 "$1"; }
within() { awk -v t="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(t >= lo && t <= hi) }' || { echo "     took $1 s, not $2–$3 s"; return 1; }; }

echo "== README, quick start"
check "quick start: dotnet run serves the API and logs the live page" \
  start "$work/quick.log" dotnet run --project src/DiagnosticScenarios
t=$(timed_get http://localhost:5000/api/diagscenario/taskwait "$work/taskwait")
check "quick start: taskwait answers success:taskwait after the mock query's 500 ms ($t s)" \
  bash -c "$(declare -f contains within); contains '$work/taskwait' success:taskwait && within '$t' 0.45 5"
curl -s -o /dev/null -D "$work/root.head" --max-time 10 http://localhost:5000/
check "quick start: http://localhost:5000/ redirects to the live page" contains "$work/root.head" "Location: http://localhost:5002/"
curl -s -o "$work/page" --max-time 10 http://localhost:5002/
check "quick start: the live page answers at http://localhost:5002/" contains "$work/page" "<canvas"
curl -s -o "$work/swagger" --max-time 10 http://localhost:5000/swagger/index.html
check "quick start: Swagger UI at /swagger" contains "$work/swagger" "swagger-ui"

echo "== README, find the blocking code (the quick start's app)"
timeout 180 scripts/load.sh taskwait 125 60s >"$work/readme-load.out" 2>&1 &
load=$!
check "find the blocking code: the page's server says starved under taskwait" starved
dotnet run --project src/dotnet-blocking -- stacks -n DiagnosticScenarios --top 3 >"$work/readme-stacks.out" 2>&1
check "find the blocking code: stacks names taskwait's line in the Debug build, and its fix" \
  bash -c "$(declare -f contains); contains '$work/readme-stacks.out' 'at StarvationScenariosController.cs:[0-9]* \`_ = database.QueryAsync' && contains '$work/readme-stacks.out' '/api/diagscenario/taskwait → taskasyncwait'"
wait "$load"; rc=$? # bounded: the load's 60 s and timeout's 180 s
check "find the blocking code: scripts/load.sh taskwait 125 60s ends (exit $rc)" test "$rc" -eq 0
check "the app stops within 10 s of SIGTERM" stop

echo "== running, a published folder"
check "published: dotnet publish -c Release src/DiagnosticScenarios -o publish" \
  dotnet publish -c Release src/DiagnosticScenarios -o publish
check "published: the app starts from the published folder" start "$work/published.log" dotnet publish/DiagnosticScenarios.dll
curl -s -o "$work/load-start" -w '%{http_code}' --max-time 10 -X POST "${control[@]}" \
  'http://localhost:5000/api/threadpool/load?scenario=diagscenario/taskasyncwait&connections=20&durationSeconds=2' >"$work/load-code"
check "published: the page's Start load starts the runner (202)" contains "$work/load-code" "202"
curl -s -o "$work/load-status" --max-time 10 http://localhost:5002/api/threadpool/load
check "published: the runner is the one in publish/loadrunner" contains "$work/load-status" '/publish/loadrunner/DiagnosticScenarios.LoadRunner.dll"'
check "published: the run's result reaches the page" result
check "the app stops within 10 s of SIGTERM" stop
check "published, workshop step 0: the executable publish/DiagnosticScenarios starts" start "$work/published-exe.log" publish/DiagnosticScenarios
# The name every tool's -n matches is the executable's (/proc/PID/comm holds only its first 15 characters).
named_app() { [ "$(basename "$(readlink "/proc/$app/exe")")" = DiagnosticScenarios ] || { echo "     process $app runs $(readlink "/proc/$app/exe")"; return 1; }; }
check "published, workshop step 0: its process is the executable DiagnosticScenarios, the name every tool's -n matches" named_app
check "the app stops within 10 s of SIGTERM" stop

echo "== running, https"
check "https: dotnet dev-certs https" dotnet dev-certs https
check "https: the https launch profile starts" \
  start "$work/https.log" dotnet run --project src/DiagnosticScenarios --launch-profile https
curl -s -o "$work/http-ping" --max-time 10 http://localhost:5000/api/diagscenario/ping
curl -sk -o "$work/https-ping" --max-time 10 https://localhost:5001/api/diagscenario/ping
check "https: ping over http://localhost:5000" contains "$work/http-ping" "success:ping"
check "https: ping over https://localhost:5001" contains "$work/https-ping" "success:ping"
check "the app stops within 10 s of SIGTERM" stop

echo "== workshop, step 0"
check "step 0: dotnet tool restore" dotnet tool restore
check "step 0: the Release app starts with the http profile" \
  start "$work/release.log" dotnet run -c Release --project src/DiagnosticScenarios --launch-profile http
check "step 0: dotnet build -c Release src/dotnet-blocking" dotnet build -c Release src/dotnet-blocking
dotnet tool run dotnet-trace -- ps >"$work/trace-ps.out" 2>&1
check "running: dotnet-trace ps lists the app by its name" contains "$work/trace-ps.out" "DiagnosticScenarios"
check "step 0: dotnet tool install --global dotnet-counters" dotnet tool install --global dotnet-counters
check "step 0: dotnet tool install --global dotnet-stack" dotnet tool install --global dotnet-stack
check "dotnet-blocking: dotnet pack the CLI" dotnet pack -c Release --no-build src/dotnet-blocking -o ./packages
check "dotnet-blocking: dotnet tool install --global the CLI" dotnet tool install --global --source ./packages dotnet-blocking

# The production page's Prometheus, as written, beside the app: the shipped alert loaded and the live page's series scraped.
setsid prometheus --config.file=monitoring/prometheus.yml --storage.tsdb.path="$(mktemp -d)" --web.listen-address=127.0.0.1:9091 >"$work/prometheus.log" 2>&1 &
prometheus_pid=$!
scraped() { for _ in $(seq 1 60); do curl -s --max-time 5 "http://127.0.0.1:9091/api/v1/query?query=$1" >"$work/prometheus-query" && grep -q '"result":\[{' "$work/prometheus-query" && return 0; sleep 0.5; done; cat "$work/prometheus-query" "$work/prometheus.log" | tail -20; return 1; }
check "production: prometheus with monitoring/prometheus.yml scrapes the live page" scraped dotnet_thread_pool_thread_count_total
curl -s --max-time 5 http://127.0.0.1:9091/api/v1/rules >"$work/prometheus-rules"
check "production: that Prometheus loaded the ThreadPoolStarvation alert" contains "$work/prometheus-rules" '"name":"ThreadPoolStarvation"'
kill -TERM -- "-$prometheus_pid" 2>/dev/null

echo "== workshop, steps 2, 3, 5, 6, 7"
t=$(timed_get http://localhost:5000/api/diagscenario/taskwait "$work/taskwait")
check "step 2: curl taskwait answers success:taskwait ($t s)" \
  bash -c "$(declare -f contains within); contains '$work/taskwait' success:taskwait && within '$t' 0.45 5"
timeout 180 dotnet run --project src/DiagnosticScenarios.LoadRunner -- run --url http://localhost:5000/api/diagscenario/taskwait -c 125 -d 30s --timeout 90s >"$work/step3.out" 2>&1 &
load=$!
check "step 3: the page's server says starved under taskwait" starved
dotnet src/dotnet-blocking/bin/Release/net10.0/dotnet-blocking.dll stacks -n DiagnosticScenarios --top 3 >"$work/stacks.out" 2>&1
check "step 6: stacks names taskwait's action, its line and its fix in the Release build" \
  bash -c "$(declare -f contains); contains '$work/stacks.out' 'blocked in Task.Result / Wait (sync-over-async) at StarvationScenariosController.cs:' && contains '$work/stacks.out' 'in StarvationScenariosController.TaskWait' && contains '$work/stacks.out' '/api/diagscenario/taskwait → taskasyncwait'"
dotnet tool run dotnet-stack -- report -n DiagnosticScenarios >"$work/dotnet-stack.out" 2>&1
check "step 6: dotnet-stack reports the raw stacks, the threads parked in .Result" contains "$work/dotnet-stack.out" "Task.InternalWaitCore"
# Right after step 6, while the 30 s load still runs (on a slow machine it may end before the trace below).
PATH="$HOME/.dotnet/tools:$PATH" dotnet-blocking stacks -n DiagnosticScenarios --top 3 >"$work/tool-stacks.out" 2>&1
check "dotnet-blocking: the installed tool names taskwait's action" contains "$work/tool-stacks.out" "in StarvationScenariosController.TaskWait"
dotnet src/dotnet-blocking/bin/Release/net10.0/dotnet-blocking.dll waits -n DiagnosticScenarios --duration 5s >"$work/waits.out" 2>&1
check "step 7: waits names taskwait's .Result and its action" \
  bash -c "$(declare -f contains); contains '$work/waits.out' 'Task.Result / Wait' && contains '$work/waits.out' 'in StarvationScenariosController.TaskWait'"
check "step 7: dotnet-trace collects the wait events to trace.nettrace" \
  dotnet tool run dotnet-trace -- collect -n DiagnosticScenarios --clrevents waithandle --clreventlevel verbose --duration 00:00:00:10 -o trace.nettrace
dotnet src/dotnet-blocking/bin/Release/net10.0/dotnet-blocking.dll waits trace.nettrace >"$work/waits-file.out" 2>&1
check "step 7: waits reads the trace file and names taskwait's .Result" \
  bash -c "$(declare -f contains); contains '$work/waits-file.out' 'trace.nettrace: ' && contains '$work/waits-file.out' 'Task.Result / Wait'"
check "step 5: dotnet-trace reads the runtime's and the app's meters" \
  dotnet tool run dotnet-trace -- collect -n DiagnosticScenarios \
  --providers 'System.Diagnostics.Metrics:0x2:4:Metrics=DiagnosticScenarios\nSystem.Runtime;RefreshInterval=1' \
  --duration 00:00:00:10
dotnet tool run dotnet-counters -- monitor -n DiagnosticScenarios --counters System.Runtime,DiagnosticScenarios --duration 00:00:00:10 >"$work/counters-local.out" 2>&1
# Its screen lists the app's meter first; a terminal's height decides how much of System.Runtime's follows.
check "step 5: dotnet-counters from the manifest shows the app's queue-delay probe" contains "$work/counters-local.out" "diagnosticscenarios.threadpool.queue_delay"
# The tutorial's command runs until q is pressed: here, for 10 s.
PATH="$HOME/.dotnet/tools:$PATH" timeout 10 dotnet-counters monitor -n DiagnosticScenarios --counters System.Runtime,DiagnosticScenarios >"$work/counters.out" 2>&1
check "step 5: dotnet-counters, installed globally, shows the runtime's and the app's meters" \
  bash -c "$(declare -f contains); contains '$work/counters.out' '[System.Runtime]' && contains '$work/counters.out' 'diagnosticscenarios.threadpool.injections'"
wait "$load"; rc=$? # bounded: the run's 30 s, its 90 s request timeout, and timeout's 180 s
check "step 3: the runner's 30 s run on taskwait ends (exit $rc) and reports" \
  bash -c "$(declare -f contains); [ $rc -eq 0 ] && contains '$work/step3.out' 'Reqs/sec'"

echo "== workshop, step 3 from the page, step 9"
curl -s -o "$work/load-start" -w '%{http_code}' --max-time 10 -X POST "${control[@]}" \
  'http://localhost:5000/api/threadpool/load?scenario=diagscenario/taskwait&connections=125&durationSeconds=5' >"$work/load-code"
check "step 3: the page's Start load starts the Release runner (202)" contains "$work/load-code" "202"
check "step 3: the page shows the run's result when it ends" result
curl -s -o "$work/min" -w '%{http_code}' --max-time 10 -X PUT "${control[@]}" 'http://localhost:5000/api/threadpool/minthreads?workers=200' >"$work/min-code"
check "step 9: Apply 200 (PUT /api/threadpool/minthreads?workers=200)" contains "$work/min-code" "200"
curl -s -o "$work/reset" -w '%{http_code}' --max-time 10 -X DELETE "${control[@]}" 'http://localhost:5000/api/threadpool/minthreads' >"$work/reset-code"
check "step 9: Reset (DELETE /api/threadpool/minthreads)" contains "$work/reset-code" "200"
check "the app stops within 10 s of SIGTERM" stop

echo "== workshop, step 4 (a restarted app)"
check "step 4: the Release app starts again" \
  start "$work/release2.log" dotnet run -c Release --project src/DiagnosticScenarios --launch-profile http
# The same request on the healthy app first (the one before it compiles the endpoint), to compare the starved one with.
timed_get http://localhost:5000/api/threadpool "$work/warm" >/dev/null
healthy=$(timed_get http://localhost:5000/api/threadpool "$work/healthy")
timeout 180 dotnet run --project src/DiagnosticScenarios.LoadRunner -- run --url http://localhost:5000/api/diagscenario/tasksleepwait -c 125 -d 30s --timeout 90s >"$work/step4.out" 2>&1 &
load=$!
check "step 4: the page's server says starved under tasksleepwait" starved
t=$(timed_get http://localhost:5002/api/threadpool "$work/live")
check "step 4: the page's server answers within a second while the pool starves ($t s)" \
  bash -c "$(declare -f contains within); contains '$work/live' '\"starved\":true' && within '$t' 0 1"
# A request to the app's own Kestrel waits in the starved pool's queue: ten times what it took on the healthy app and
# 50 ms at the least. Not the queue's whole second of work, which the starvation rule reads over three seconds: at one
# instant the pool may just have taken a thread. curl gives up at 30 s, just past it, and a request still waiting then
# has waited all the more.
t=$(timed_get http://localhost:5000/api/threadpool "$work/live-kestrel")
least=$(awk -v h="$healthy" 'BEGIN { x = 10 * h; printf "%.3f", (x < 0.05 ? 0.05 : x) }')
check "step 4: the same through the app's Kestrel waits for a pool thread ($t s; $healthy s on the healthy app)" \
  bash -c "$(declare -f within); within '$t' '$least' 31"
wait "$load"; rc=$?
check "step 4: the runner's run on tasksleepwait answers its requests within the 90 s, none timed out" \
  bash -c "$(declare -f contains); [ $rc -eq 0 ] && contains '$work/step4.out' 'timeouts 0,' && contains '$work/step4.out' 'answered [1-9]'"
check "the app stops within 10 s of SIGTERM" stop

echo "walkthrough: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

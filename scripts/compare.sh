#!/usr/bin/env bash
# Builds the app and the load runner (Release) and runs `compare`: every scenario of a family on a
# fresh server process, the table on screen, compare.md/.json/.svg under results/<timestamp>/.
# Every argument goes to the runner, e.g. --scenarios taskwait,taskasyncwait -c 125 -d 10s --cpus 2 --min-threads 200.
set -euo pipefail

usage() {
  echo "usage: $(basename "$0") [--family mock|sql|blocking] [--scenarios a,b,...] [-c 125] [-d 10s] [--cpus 2] [--min-threads N] [--delay-ms N] [--env KEY=VALUE]... [--out DIR] [any other option of the runner's compare: dotnet run --project src/DiagnosticScenarios.LoadRunner -- compare --help]" >&2
  exit 2
}
case "${1:-}" in -h|--help) usage ;; esac

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

dotnet build src/DiagnosticScenarios -c Release -v quiet -nologo >/dev/null
dotnet build src/DiagnosticScenarios.LoadRunner -c Release -v quiet -nologo >/dev/null

# Connections are file descriptors; leave room for the largest -c a user is likely to pass.
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt 12000 ]; then
  ulimit -n 12000 2>/dev/null || true
fi

exec src/DiagnosticScenarios.LoadRunner/bin/Release/net10.0/DiagnosticScenarios.LoadRunner compare \
  --app src/DiagnosticScenarios/bin/Release/net10.0/DiagnosticScenarios.dll "$@"

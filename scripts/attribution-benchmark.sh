#!/usr/bin/env bash
# What the thread-pool health feature adds to one request, without the machine's noise: BenchmarkDotNet runs the
# attribution pipeline with ThreadPoolHealth:Enabled true and false (on one thread, and on two threads at once on the
# same endpoint) and prints ns and bytes per request. Compare with the CPU a whole ping costs the server
# (scripts/health-overhead-saturation.sh prints it per request).
# Usage: scripts/attribution-benchmark.sh [BenchmarkDotNet options, e.g. --job short]
set -euo pipefail
cd "$(dirname "$0")/.."
dotnet build -c Release -v q -nologo benchmarks/DiagnosticScenarios.Benchmarks >/dev/null
artifacts=$(mktemp -d)
trap 'rm -rf "$artifacts"' EXIT
dotnet benchmarks/DiagnosticScenarios.Benchmarks/bin/Release/net10.0/DiagnosticScenarios.Benchmarks.dll --filter '*AttributionBenchmarks*' --artifacts "$artifacts" "$@" |
  sed -n '/^| Method/,/^$/p'

#!/usr/bin/env bash
# What the metrics export adds to one request, without the machine's noise: BenchmarkDotNet sends a ping through
# ASP.NET Core's hosting (Kestrel on a loopback port, and in memory) and the attribution with MetricsExport:Enabled true
# and false, and records one request's measurements through the SDK alone, and prints ns and bytes per request. Compare
# with the CPU a whole ping costs the server (scripts/health-overhead-saturation.sh prints it).
# Usage: scripts/metrics-export-benchmark.sh [BenchmarkDotNet options, e.g. --job short]
set -euo pipefail
cd "$(dirname "$0")/.."
dotnet build -c Release -v q -nologo benchmarks/DiagnosticScenarios.Benchmarks >/dev/null
artifacts=$(mktemp -d)
trap 'rm -rf "$artifacts"' EXIT
dotnet benchmarks/DiagnosticScenarios.Benchmarks/bin/Release/net10.0/DiagnosticScenarios.Benchmarks.dll --filter '*MetricsExportBenchmarks*' '*MetricsRecordingBenchmarks*' --artifacts "$artifacts" "$@" |
  sed -n '/^| Method/,/^$/p'

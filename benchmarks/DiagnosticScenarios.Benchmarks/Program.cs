using BenchmarkDotNet.Running;
using DiagnosticScenarios.Benchmarks;

BenchmarkSwitcher.FromAssembly(typeof(AttributionBenchmarks).Assembly).Run(args);

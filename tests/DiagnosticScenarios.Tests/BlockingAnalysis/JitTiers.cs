using System.Collections.Concurrent;
using System.Diagnostics.Tracing;
using System.Text.RegularExpressions;
using Microsoft.Diagnostics.NETCore.Client;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.Parsers;
using Microsoft.Diagnostics.Tracing.Parsers.Clr;

namespace DiagnosticScenarios.Tests.BlockingAnalysis;

/// <summary>
/// How the JIT of a process compiles methods, from its own events read over EventPipe from the moment this starts: each
/// compile's tier (<c>MethodLoadVerbose</c>), and which methods it inlined into which (<c>MethodJitInliningSucceeded</c>). A
/// method runs optimized code once it is compiled at tier 1 or inlined into a method compiled optimized (at tier 1, or a
/// method compiled at run time, such as ASP.NET Core's invokers, which are optimized from the start).
/// </summary>
internal sealed class JitTiers : IDisposable
{
    private const ClrTraceEventParser.Keywords Keywords = ClrTraceEventParser.Keywords.Jit | ClrTraceEventParser.Keywords.JitTracing;

    private readonly EventPipeSession _session;
    private readonly Thread _reader;
    private readonly ConcurrentDictionary<string, OptimizationTier> _lastTier = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<string, ConcurrentDictionary<string, byte>> _inlinedInto = new(StringComparer.Ordinal);

    private JitTiers(EventPipeSession session)
    {
        _session = session;
        _reader = new Thread(Read) { IsBackground = true, Name = "JIT events" };
        _reader.Start();
    }

    public static JitTiers Listen(int processId) =>
        new(new DiagnosticsClient(processId).StartEventPipeSession(new EventPipeProvider(ClrTraceEventParser.ProviderName, EventLevel.Verbose, (long)Keywords), requestRundown: false));

    /// <summary>
    /// How the method (<c>Type.Method</c>, <c>*</c> for the compiler's numbers) runs, or null when the JIT has not compiled
    /// it optimized yet: "tier 1", or "inlined into X (tier)".
    /// </summary>
    public string? Optimized(string method)
    {
        var pattern = new Regex("(^|[.])" + Regex.Escape(method).Replace(@"\*", "[^.]*", StringComparison.Ordinal) + "$");
        foreach (var (name, tier) in _lastTier)
        {
            if (pattern.IsMatch(name) && tier == OptimizationTier.OptimizedTier1)
            {
                return "tier 1";
            }
        }

        foreach (var (inlinee, inliners) in _inlinedInto)
        {
            if (!pattern.IsMatch(inlinee))
            {
                continue;
            }

            foreach (var inliner in inliners.Keys)
            {
                if (_lastTier.TryGetValue(inliner, out var tier) && tier is OptimizationTier.OptimizedTier1 or OptimizationTier.Optimized)
                {
                    return $"inlined into {inliner} ({tier})";
                }
            }
        }

        return null;
    }

    public void Dispose()
    {
        _session.Stop();
        _reader.Join(TimeSpan.FromSeconds(10));
        _session.Dispose();
    }

    private void Read()
    {
        using var source = new EventPipeEventSource(_session.EventStream);
        source.Clr.MethodLoadVerbose += data => _lastTier[$"{data.MethodNamespace}.{data.MethodName}"] = data.OptimizationTier;
        source.Clr.MethodInliningSucceeded += data =>
            _inlinedInto.GetOrAdd($"{data.InlineeNamespace}.{data.InlineeName}", _ => new(StringComparer.Ordinal))
                .TryAdd($"{data.MethodBeingCompiledNamespace}.{data.MethodBeingCompiledName}", 0);
        try
        {
            source.Process();
        }
        catch (Exception e) when (e is EndOfStreamException or IOException)
        {
            // The session ended with the process.
        }
    }
}

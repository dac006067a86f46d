namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>
/// The task a blocked thread waits on, as a dump shows it: the async methods still pending under it, innermost first, each
/// at the await it is suspended at, and what the innermost one awaits. A live capture cannot see it: the runtime's events
/// carry no task's continuation chain.
/// </summary>
/// <param name="Chain">The pending async methods, innermost first; empty when the task is not an async method's.</param>
/// <param name="Awaiting">What the innermost method awaits, e.g. "Task.Delay"; or the waited task's own kind when <paramref name="Chain"/> is empty.</param>
public sealed record AwaitedTask(IReadOnlyList<AsyncFrame> Chain, string Awaiting)
{
    /// <summary>"waits for MockDatabase.QueryAsync at MockDatabase.cs:14 `await Task.Delay(delay);` ← Orders.GetAsync at Orders.cs:9, awaiting Task.Delay".</summary>
    public string Describe() => Chain.Count == 0
        ? $"waits for {Awaiting}"
        : $"waits for {string.Join(" ← ", Chain.Select(f => f.ToString()))}, awaiting {Awaiting}";
}

/// <summary>An async method suspended at an await.</summary>
/// <param name="Method"><c>Type.Method</c>, as the app's source names it (not its state machine's <c>&lt;Method&gt;d__3.MoveNext</c>).</param>
/// <param name="Await">The await's file, line and text; null when the PDB is not there (<paramref name="NoSource"/> says why).</param>
/// <param name="State">The state machine's state: which of the method's awaits, counted from 0, it is suspended at.</param>
public sealed record AsyncFrame(string Method, SourceLine? Await, string? NoSource, int State)
{
    public override string ToString() => Await is { } line ? $"{Method} at {line}" : $"{Method} (await #{State + 1}; no line: {NoSource})";
}

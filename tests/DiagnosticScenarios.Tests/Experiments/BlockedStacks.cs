using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.Common.Catalogue;
using DiagnosticScenarios.Scenarios.Catalogue;
using DiagnosticScenarios.Tests.Scenarios.Catalogue;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.CSharp.Syntax;

namespace DiagnosticScenarios.Tests.Experiments;

/// <summary>
/// Stack snapshots of a server under load, recorded while the load is on and analysed after it, and what they must show:
/// the scenario's action and line (or, inlined, its route) parked in its blocking call, or no app code parked at all.
/// </summary>
internal static class BlockedStacks
{
    private const int Shown = 6;

    /// <summary>
    /// The blocking site with the most parked pool threads names <paramref name="scenario"/> (see <see cref="Names"/>) and is
    /// parked in a <paramref name="blocking"/> call, or in one of <paramref name="alsoBlocking"/> when the action makes other kinds of blocking call.
    /// </summary>
    public static void AssertTopSiteNames(StackSnapshot snapshot, Scenario scenario, BlockingKind blocking, params BlockingKind[] alsoBlocking)
    {
        var top = snapshot.TopBlockedPoolSite();
        var groups = Describe(snapshot);
        Assert.True(top is not null, $"{scenario.Name}: no pool thread parked in a blocking call. {groups}");
        Assert.True(Names(top, scenario), $"{scenario.Name}: the top site names neither {scenario.Action} at a line of its body nor, inlined, {scenario.Route}. {groups}");
        Assert.True(top.Blocking.Kind == blocking || alsoBlocking.Contains(top.Blocking.Kind),
            $"{scenario.Name}: the top site is parked in {top.Blocking.Kind}, not {string.Join(" or ", alsoBlocking.Prepend(blocking))}. {groups}");
    }

    /// <summary>Some site of parked pool threads names <paramref name="scenario"/> and is parked in a <paramref name="blocking"/> call.</summary>
    public static void AssertSomeSiteNames(StackSnapshot snapshot, Scenario scenario, BlockingKind blocking)
    {
        Assert.True(snapshot.BlockedPoolSites.Any(s => s.Blocking.Kind == blocking && Names(s, scenario)),
            $"{scenario.Name}: no pool thread parked in {blocking} under {scenario.Action} or {scenario.Route}. {Describe(snapshot)}");
    }

    /// <summary>
    /// A site names a scenario by its action and line: a frame of the action (or of code the compiler made of its body)
    /// carries a line of the action's body before its return, with the line's text read from the source; or, where the JIT
    /// inlined the action into ASP.NET Core's compiled invoker, by saying so and naming the scenario's route.
    /// </summary>
    public static bool Names(BlockingSite site, Scenario scenario) =>
        NamesLine(site.AppFrames, scenario.Action)
        || (site.InlinedInto is not null && site.RequestsSeen is { } requests && requests.Contains($" {scenario.Route} (", StringComparison.Ordinal));

    /// <summary>
    /// Where the JIT inlined a controller action: into the method ASP.NET Core compiled to call it, which MVC's action
    /// executor or invoker calls (<c>ActionMethodExecutor+SyncObjectResultExecutor.Execute</c>, or
    /// <c>ControllerActionInvoker.InvokeActionMethodAsync</c>).
    /// </summary>
    public static bool IsInlinedIntoAnActionInvoker(InlinedInvoker? inlinedInto) =>
        inlinedInto is { } into && into.CalledBy.Any(caller => caller.StartsWith("ActionMethodExecutor", StringComparison.Ordinal) || caller.StartsWith("ControllerActionInvoker", StringComparison.Ordinal));

    /// <summary>A wait site names a scenario as a blocking site does: by its action and line, or, inlined, by the route its threads' requests took.</summary>
    public static bool Names(WaitSite site, Scenario scenario) =>
        NamesLine(site.AppFrames, scenario.Action)
        || (site.InlinedInto is not null && site.Requests.Any(r => r.Request.EndsWith($" {scenario.Route}", StringComparison.Ordinal)));

    /// <summary>
    /// A frame of <paramref name="action"/> (or of code the compiler made of its body) carries, with its text, a line of the
    /// code the action's <c>// BAD:</c> comment marks; for an action with none (its block is in code it calls), a line of a
    /// statement of its body that makes a call: not one that only returns a value, where the return address of a call on
    /// the line before would point.
    /// </summary>
    public static bool NamesLine(IEnumerable<AppFrame> appFrames, string action)
    {
        var (file, callLines) = BodyLines(action);
        return appFrames.Any(f => IsFrameOf(f.Method, action)
            && f.Source is { Text: not null } source
            && source.FileName == file
            && callLines.Contains(source.Line));
    }

    /// <summary>
    /// No pool thread is parked in a blocking call the app's code made (see <see cref="StackSnapshot.PoolGroupsBlockedInApp"/>),
    /// in a snapshot taken while the scenario's requests arrived: the hosting events up to its sampling count them (a
    /// snapshot of an idle server would find nothing parked either). Counted, not read from the threads' last labels: a
    /// ping started after the load's last wave relabels the few threads that started it.
    /// </summary>
    public static void AssertNoPoolGroupBlockedInApp(StackSnapshot snapshot, Scenario scenario)
    {
        var started = snapshot.Requests?.Started?.Where(r => r.Key.EndsWith($" {scenario.Route}", StringComparison.Ordinal)).Sum(r => r.Value) ?? 0;
        Assert.True(started > 0,
            $"{scenario.Name}: no request of {scenario.Route} started in the snapshot's window, so it was not taken under its load. {snapshot.Requests?.Source}");
        Assert.True(!snapshot.PoolGroupsBlockedInApp().Any(), $"{scenario.Name}: pool threads parked in the app's code. {Describe(snapshot)}");
    }

    /// <summary>The snapshot's blocking sites, then its largest groups, one a line: threads, blocking frame, app frames and the call the app made.</summary>
    public static string Describe(StackSnapshot snapshot) =>
        $"Snapshot of {snapshot.ThreadCount} threads ({snapshot.PoolThreadCount} pool), recorded in {snapshot.CaptureMs} ms, analysed in {snapshot.AnalysisMs} ms, blocking sites:\n"
        + string.Join('\n', snapshot.BlockedPoolSites.Take(Shown).Select(s => $"  {s.Describe(snapshot.PoolThreadCount)}"))
        + "\nlargest groups:\n"
        + string.Join('\n', snapshot.Groups.Take(Shown).Select(g => $"  {g.Describe(snapshot.PoolThreadCount)}{AppCall(g)}"))
        + UnparkedPoolStack(snapshot);

    // Pool threads that are in no known blocking call are running something: where, when the message must say what the
    // snapshot caught instead of the scenario's wait.
    private static string UnparkedPoolStack(StackSnapshot snapshot) =>
        snapshot.Groups.FirstOrDefault(g => g.PoolThreads && g.Blocking is null) is { } running
            ? $"\nthe largest group of pool threads in no blocking call, leaf first:\n    {string.Join("\n    ", running.Frames.Take(25))}"
            : "";

    // The call the app made when it is not the blocking frame itself, e.g. SqlCommand.ExecuteNonQuery above a socket read.
    private static string AppCall(ThreadGroup group) =>
        group.AppCall is { } call && call != group.Blocking?.Frame ? $", calling {call}" : "";

    // The file of an action (Type.Method, in whichever file of the app's source declares the type) and the lines of its
    // body's statements that make a call, read from the source's syntax.
    private static (string File, HashSet<int> CallLines) BodyLines(string action)
    {
        var dot = action.LastIndexOf('.');
        var (type, method) = (action[..dot], action[(dot + 1)..]);
        foreach (var path in Directory.EnumerateFiles(Path.Combine(RepositoryPaths.Root, "src", "DiagnosticScenarios"), "*.cs", SearchOption.AllDirectories))
        {
            var text = File.ReadAllText(path);
            if (!text.Contains($"class {type}", StringComparison.Ordinal))
            {
                continue;
            }

            var root = CSharpSyntaxTree.ParseText(text).GetRoot();
            var declaration = root.DescendantNodes().OfType<TypeDeclarationSyntax>().Where(t => t.Identifier.Text == type)
                .SelectMany(t => t.Members.OfType<MethodDeclarationSyntax>())
                .SingleOrDefault(m => m.Identifier.Text == method);
            if (declaration is null)
            {
                continue;
            }

            // The blocking call is the code the action's // BAD: comment marks; an action whose block hides in code it calls
            // (difactory's, in a DI factory) has none, and its frame carries the line of a statement that makes a call.
            var marked = ScenarioCode.MarkedIn((SyntaxNode?)declaration.Body ?? declaration.ExpressionBody!).ToList();
            IEnumerable<SyntaxNode> statements = marked.Count > 0
                ? marked
                : declaration.DescendantNodes().OfType<StatementSyntax>()
                    .Where(statement => statement is not BlockSyntax && statement.DescendantNodes().Any(n => n is InvocationExpressionSyntax or MemberAccessExpressionSyntax))
                    .Where(statement => statement is not ReturnStatementSyntax { Expression: null or LiteralExpressionSyntax or InterpolatedStringExpressionSyntax })
                    .Cast<SyntaxNode>();
            var lines = statements.SelectMany(statement =>
            {
                var span = statement.GetLocation().GetLineSpan();
                return Enumerable.Range(span.StartLinePosition.Line + 1, span.EndLinePosition.Line - span.StartLinePosition.Line + 1);
            });
            return (Path.GetFileName(path), [.. lines]);
        }

        throw new InvalidOperationException($"{action}: no such method in the app's source");
    }

    /// <summary>
    /// <paramref name="frame"/> (<c>Type.Method</c>) is the action <paramref name="action"/> (<c>Controller.Action</c>) or code the
    /// compiler made of its body: its async state machine (<c>Controller+&lt;Action&gt;d__5.MoveNext</c>) or a lambda in it
    /// (<c>Controller+&lt;&gt;c__DisplayClass6_0.&lt;Action&gt;b__0</c>), which is what a Task.Run delegate's thread shows.
    /// </summary>
    public static bool IsFrameOf(string frame, string action)
    {
        var dot = action.LastIndexOf('.');
        var (controller, method) = (action[..dot], action[(dot + 1)..]);
        return frame == action
            || (frame.StartsWith(controller + "+", StringComparison.Ordinal) && frame.Contains($"<{method}>", StringComparison.Ordinal));
    }
}


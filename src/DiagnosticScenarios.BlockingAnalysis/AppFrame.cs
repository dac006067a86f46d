namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>A frame of the app's own code and the line of the call it is making.</summary>
/// <param name="Method"><c>Type.Method</c>, e.g. <c>StarvationScenariosController.TaskWait</c>.</param>
/// <param name="Source">The file and line of the call; null when they cannot be known.</param>
/// <param name="NoSource">Why there is no line (the PDB or the map that is missing); null when there is one.</param>
public sealed record AppFrame(string Method, SourceLine? Source, string? NoSource)
{
    /// <summary>
    /// For the app's innermost frame, the name of its method's asynchronous twin on the same type (<c>QueryAsync</c> for
    /// <c>MockDatabase.Query</c>), as a driver offers both faces; null when the type has none or it was not looked for.
    /// </summary>
    public string? AsyncTwin { get; init; }

    /// <summary>
    /// The app method the JIT inlined into this frame where the frame's call is made (the blocking call, for the innermost),
    /// with that call's line: the frame's line is its call to that method, which left no frame
    /// (<see cref="SourceLines.FindCall"/>). Null when the frame makes the call itself.
    /// </summary>
    public AppFrame? Inlined { get; init; }

    /// <summary>
    /// How the JIT had compiled the code the frame runs (<c>OptimizedTier1</c>, <c>QuickJitted</c>, <c>Optimized</c> for a
    /// method compiled at run time, …), or, for a method it inlined, the code it was inlined into; null when the trace does not say.
    /// </summary>
    public string? Tier { get; init; }

    /// <summary>"StarvationScenariosController.TaskWait at StarvationScenariosController.cs:35", or the method and why it has no line.</summary>
    public override string ToString() => Source is null ? $"{Method} (no line: {NoSource})" : $"{Method} at {Source.FileName}:{Source.Line}";
}

/// <summary>A line of source: its file, its number and, when the file is on disk, the statement on it.</summary>
/// <param name="File">The path the PDB gives (where the app was built).</param>
/// <param name="Line">One-based.</param>
/// <param name="Text">The statement, on one line, shortened with "…" past 100 characters; null when the file is not on this machine.</param>
public sealed record SourceLine(string File, int Line, string? Text)
{
    public string FileName => Path.GetFileName(File);

    /// <summary>The file on disk is not the one the build compiled (its checksum differs from the PDB's): its text is not shown.</summary>
    public bool ChangedSinceTheBuild { get; init; }

    /// <summary><c>StarvationScenariosController.cs:35 `_ = database.QueryAsync(…).Result;`</c>, or the place and why its text is not shown.</summary>
    public override string ToString() => (Text, ChangedSinceTheBuild) switch
    {
        (not null, _) => $"{FileName}:{Line} `{Text}`",
        (null, true) => $"{FileName}:{Line} (the source at {File} changed since the build: its lines are not the build's)",
        (null, false) => $"{FileName}:{Line} (no source file at {File}, where the PDB says it was built)",
    };
}

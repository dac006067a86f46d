using System.Diagnostics;
using Microsoft.Diagnostics.Runtime;

namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>
/// Stack snapshots read from a core dump (<c>dotnet-dump collect</c>, <c>createdump</c>, <c>DiagnosticsClient.WriteDump</c>)
/// with ClrMD: each managed thread's frames, with the runtime's own IL-to-native maps, go through the resolver a live
/// capture uses, so the groups, sites, lines and fixes are the same; and, where a site's threads wait on a task, the async
/// methods pending under it (<see cref="AwaitedTasks"/>), which only a dump shows.
/// </summary>
public static class DumpSnapshots
{
    private const string DynamicMethod = "dynamicClass.lambda_method()";

    /// <summary>Reads <paramref name="dumpPath"/>'s threads and groups their stacks as <see cref="StackSnapshots.Analyze(string, DiagnosisOptions?, RequestLabels?)"/> does a trace's.</summary>
    /// <exception cref="DiagnosisException">The file is not a core dump, is cut short, holds no .NET runtime, or its runtime's DAC is not on this machine.</exception>
    public static StackSnapshot Analyze(string dumpPath, DiagnosisOptions? options = null)
    {
        DumpFiles.Check(dumpPath);
        try
        {
            return Read(dumpPath, options ?? DiagnosisOptions.Default);
        }
#pragma warning disable CA1031 // a damaged dump fails inside ClrMD in ways it does not document: one line, not a stack trace
        catch (Exception e) when (e is not DiagnosisException and not OutOfMemoryException)
#pragma warning restore CA1031
        {
            throw new DiagnosisException(DiagnosisFailure.UnreadableDump, $"{dumpPath} could not be read: the dump is damaged ({e.GetType().Name}: {FirstLine(e)})", e);
        }
    }

    private static StackSnapshot Read(string dumpPath, DiagnosisOptions options)
    {
        var analysis = Stopwatch.StartNew();
        using var target = Load(dumpPath);
        using var runtime = CreateRuntime(target, dumpPath);
        var processId = target.DataReader.ProcessId;

        var stacks = new Dictionary<int, (ClrThread Thread, List<TraceFrame> Frames)>();
        var code = new Dictionary<ulong, JittedCode>();
        var modules = new Dictionary<ulong, ModuleFile?>();
        foreach (var thread in runtime.Threads.Where(t => t.IsAlive))
        {
            var frames = new List<TraceFrame>();
            foreach (var frame in thread.EnumerateStackTrace())
            {
                if (frame.Method is not { } method)
                {
                    // Code compiled at run time (ASP.NET Core's lambda_method invokers): the DAC names no method for it.
                    if (frame.Kind == ClrStackFrameKind.ManagedMethod)
                    {
                        frames.Add(new TraceFrame($"dynamicClass!{DynamicMethod}", "dynamicClass", null, DynamicMethod, frame.InstructionPointer));
                    }

                    continue;
                }

                var module = ModuleOf(method, modules, options.Locate);
                var moduleName = module is null ? "dynamicClass" : Path.GetFileNameWithoutExtension(module.Path);
                var name = method.Signature ?? $"{method.Type?.Name}.{method.Name}()";
                frames.Add(new TraceFrame($"{moduleName}!{name}", moduleName, module?.Path, name, frame.InstructionPointer));
                if (!code.ContainsKey(method.MethodDesc) && Jitted(method, module) is { } jitted)
                {
                    code[method.MethodDesc] = jitted;
                }
            }

            if (frames.Count > 0)
            {
                stacks[(int)thread.OSThreadId] = (thread, frames);
            }
        }

        using var resolver = new StackResolver(NativeCodeMaps.From(code.Values), modules.Values.Select(m => m?.Path), options);
        var threads = stacks.ToDictionary(s => s.Key, s => resolver.Resolve(s.Value.Frames));
        var awaited = new AwaitedTasks(runtime, resolver.Sources);
        var actions = threads.Where(t => t.Value.InvokerIndex is not null)
            .Select(t => (Thread: t.Key, Action: ActionOn(runtime, stacks[t.Key].Thread)))
            .Where(t => t.Action is not null)
            .ToDictionary(t => t.Thread, t => t.Action!);
        var requests = actions.Count == 0 ? null : new RequestLabels("the MVC actions their stacks hold in the dump", "serving", "no MVC action on these threads' stacks", new Dictionary<int, string>(), Exact: true)
        {
            Endpoints = actions,
        };
        var waitedOn = threads.Keys.ToDictionary(id => id, id => awaited.WaitedOn(stacks[id].Thread, stacks[id].Frames));
        // The outermost async method of each wait tells apart two blocking calls of one endpoint that the JIT inlined alike.
        var awaitedBy = waitedOn.Where(w => w.Value?.Chain is [.., _]).ToDictionary(w => w.Key, w => w.Value!.Chain[^1].Method);
        var groups = StackSnapshots.GroupStacks(threads, resolver, requests, awaitedBy)
            .Select(g => g with { Awaits = MostCommon(g.ThreadIds.Select(id => waitedOn[id])) })
            .ToList();

        return new StackSnapshot(
            ProcessId: processId,
            CapturedAt: new DateTimeOffset(File.GetLastWriteTimeUtc(dumpPath), TimeSpan.Zero),
            CaptureMs: 0,
            AnalysisMs: Math.Round(analysis.Elapsed.TotalMilliseconds, 1),
            ThreadCount: threads.Count,
            PoolThreadCount: groups.Where(g => g.PoolThreads).Sum(g => g.Threads),
            Groups: groups)
        {
            Modules = resolver.Modules,
            Requests = requests,
            Source = $"Dump {Path.GetFullPath(dumpPath)} (process {processId}, runtime {Path.GetFileName(Path.GetDirectoryName(runtime.ClrInfo.ModuleInfo.FileName))})",
        };
    }

    // Local files only: the DAC beside the runtime the dump names, no symbol server (a download would hang an offline machine).
    private static DataTarget Load(string dumpPath)
    {
        try
        {
            return DataTarget.LoadDump(dumpPath, new DataTargetOptions { SymbolPaths = [] });
        }
        catch (Exception e) when (e is InvalidDataException or IOException or NotSupportedException or InvalidOperationException or ArgumentException)
        {
            throw new DiagnosisException(DiagnosisFailure.UnreadableDump, $"{dumpPath} could not be read as a core dump: {FirstLine(e)}", e);
        }
    }

    private static ClrRuntime CreateRuntime(DataTarget target, string dumpPath)
    {
        if (target.ClrVersions is not [var clr, ..])
        {
            throw new DiagnosisException(DiagnosisFailure.UnreadableDump, $"{dumpPath} is a dump of a process with no .NET runtime loaded: there are no managed threads to read.");
        }

        // The DAC ships beside the runtime: the folder the dump names it in, on this machine, if that runtime is here. A
        // runtime folder is named by its version, and ClrMD reads no version from a Linux core, so the one there is taken.
        var runtimeFolder = Path.GetDirectoryName(clr.ModuleInfo.FileName) ?? "";
        var dac = Path.Combine(runtimeFolder, "libmscordaccore.so");
        try
        {
            return File.Exists(dac) ? clr.CreateRuntime(dac, ignoreMismatch: true) : clr.CreateRuntime();
        }
        catch (Exception e) when (e is FileNotFoundException or InvalidOperationException or ClrDiagnosticsException or IOException or DllNotFoundException or BadImageFormatException)
        {
            throw new DiagnosisException(DiagnosisFailure.UnreadableDump, File.Exists(dac)
                ? $"{dumpPath} could not be read by its runtime's DAC ({dac}): the dump is damaged or lacks the runtime's memory ({FirstLine(e)})"
                : $"{dumpPath} is a dump of the .NET runtime in {runtimeFolder}, whose DAC (libmscordaccore.so) is not on this machine: read the dump where that runtime is installed, at the same path ({FirstLine(e)})", e);
        }
    }

    // A module's file as the dump names it (or where --symbols holds it), with its PDB's id, so a module not on this disk still finds its PDB; null for
    // code compiled at run time (lambda_method), which has no file.
    private static ModuleFile? ModuleOf(ClrMethod method, Dictionary<ulong, ModuleFile?> modules, Func<string, string> locate)
    {
        if (method.Type?.Module is not { } module)
        {
            return null;
        }

        if (!modules.TryGetValue(module.Address, out var file))
        {
            file = module.IsDynamic || string.IsNullOrEmpty(module.Name) || !Path.IsPathRooted(module.Name)
                ? null
                : new ModuleFile(locate(module.Name), 0, module.Pdb?.Guid ?? Guid.Empty, module.Pdb?.Path);
            modules[module.Address] = file;
        }

        return file;
    }

    // The method's hot code with the runtime's own map from native to IL offsets, as the trace's rundown reports them.
    private static JittedCode? Jitted(ClrMethod method, ModuleFile? module)
    {
        var hot = method.HotColdInfo;
        if (hot.HotStart == 0 || hot.HotSize == 0)
        {
            return null;
        }

        var map = method.ILOffsetMap.Where(m => m.StartAddress >= hot.HotStart && m.StartAddress < hot.HotStart + hot.HotSize).ToList();
        var tier = method.CompilationType == MethodCompilationType.Ngen ? "ReadyToRun" : "Unknown";
        return new JittedCode(hot.HotStart, (int)hot.HotSize, method.MetadataToken, module, tier,
            [.. map.Select(m => m.ILOffset)], [.. map.Select(m => (int)(m.StartAddress - hot.HotStart))]);
    }

    // The MVC action a thread runs, from its ControllerActionInvoker on the stack: its descriptor's MethodInfo holds the
    // method's handle. Where a Release build's JIT inlined the action into a compiled invoker, it names the code back, as
    // the endpoint log does for a live capture.
    private static EndpointLabel? ActionOn(ClrRuntime runtime, ClrThread thread)
    {
        foreach (var root in thread.EnumerateStackRoots())
        {
            var invoker = root.Object;
            if (invoker.Type?.Name != "Microsoft.AspNetCore.Mvc.Infrastructure.ControllerActionInvoker")
            {
                continue;
            }

            if (invoker.TryReadObjectField("_controllerContext", out var context)
                && context.TryReadObjectField("<ActionDescriptor>k__BackingField", out var descriptor)
                && descriptor.TryReadObjectField("<MethodInfo>k__BackingField", out var methodInfo)
                && methodInfo.Type?.GetFieldByName("m_handle") is { } handle
                && runtime.GetMethodByHandle(handle.Read<ulong>(methodInfo.Address, interior: false)) is { } method
                && method.Type?.Module is { Name: { } modulePath } && Path.IsPathRooted(modulePath))
            {
                return new EndpointLabel($"{method.Type.Name}.{method.Name}", new EndpointMethod(modulePath, method.MetadataToken)) { SeenAs = "whose action the dump shows on the stacks of" };
            }
        }

        return null;
    }

    // What most of a group's threads wait on (they share a stack, so nearly always one chain).
    private static AwaitedTask? MostCommon(IEnumerable<AwaitedTask?> awaited) =>
        awaited.OfType<AwaitedTask>().GroupBy(a => a.Describe(), StringComparer.Ordinal).MaxBy(g => g.Count())?.First();

    private static string FirstLine(Exception e) => e.Message.Split('\n', 2)[0].Trim();
}

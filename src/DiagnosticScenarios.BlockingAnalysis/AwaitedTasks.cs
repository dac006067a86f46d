using Microsoft.Diagnostics.Runtime;

namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>
/// The task a blocked thread of a dump waits on, and the async methods pending under it, as SOS's <c>dumpasync</c> walks
/// them: the task is the one the wait's frame holds on the stack; an async method's task is the box of its state machine,
/// whose <c>&lt;&gt;1__state</c> says which await it is suspended at and whose awaiter field holds the task it awaits, down
/// to a task no async method completes (<c>Task.Delay</c>'s, a <c>TaskCompletionSource</c>'s). A task that holds no
/// reference to what it waits for (<c>Unwrap</c>'s promise, a <c>ContinueWith</c>) is followed back through the heap: the
/// task whose continuation it is.
/// </summary>
internal sealed class AwaitedTasks(ClrRuntime runtime, SourceLines sources)
{
    private const string Task = "System.Threading.Tasks.Task";
    private const int DeepestChain = 64;

    // The frames of a wait on a task: Task.Wait, .Result, GetAwaiter().GetResult() all end in these.
    private static readonly string[] WaitFrames =
    [
        "System.Threading.Tasks.Task.SpinThenBlockingWait",
        "System.Threading.Tasks.Task.InternalWaitCore",
        "System.Threading.Tasks.Task.InternalWait",
        "System.Threading.Tasks.Task.Wait",
        "System.Threading.Tasks.Task`1.GetResultCore",
        "System.Threading.Tasks.Task`1.get_Result",
        "System.Runtime.CompilerServices.TaskAwaiter.HandleNonSuccessAndDebuggerNotification",
    ];

    /// <summary>The task <paramref name="thread"/> waits on with its pending async chain; null when the thread waits on no task.</summary>
    public AwaitedTask? WaitedOn(ClrThread thread, IReadOnlyList<TraceFrame> frames)
    {
        if (!frames.Any(f => IsWaitFrame(FrameNames.Method(f.Name))))
        {
            return null;
        }

        // The innermost task the wait's frames hold: the task's own `this` in InternalWaitCore.
        ClrObject? waited = null;
        foreach (var root in thread.EnumerateStackRoots())
        {
            if (root.StackFrame?.Method is { } method && IsWaitFrame($"{method.Type?.Name}.{method.Name}") && IsTask(root.Object.Type))
            {
                waited = root.Object;
                break;
            }
        }

        return waited is { } task ? Chain(task) : null;
    }

    // Task to the task it is the continuation of, read once from the whole heap when a chain needs it.
    private Dictionary<ulong, ClrObject>? _continuedFrom;

    private AwaitedTask Chain(ClrObject task)
    {
        var outerFirst = new List<AsyncFrame>();
        var current = task;
        for (var depth = 0; depth < DeepestChain; depth++)
        {
            if (StateMachine(current) is not { } machine)
            {
                if (current.Type?.Name?.Contains("AsyncStateMachineBox", StringComparison.Ordinal) == true)
                {
                    outerFirst.Reverse();
                    return new AwaitedTask(outerFirst, "an async method's task whose state machine the dump does not hold (a mini or triage dump has no heap: take a heap or full dump)");
                }

                // A ContinueWith's task names the task it continues; Unwrap's promise is found from the one it continues.
                if (current.TryReadObjectField("m_antecedent", out var antecedent) && antecedent.IsValid && IsTask(antecedent.Type))
                {
                    current = antecedent;
                    continue;
                }

                if (LeafKind(current.Type) is null && ContinuedFrom(current) is { } earlier)
                {
                    current = earlier;
                    continue;
                }

                break;
            }

            var (address, type, interior) = machine;
            var state = type.GetFieldByName("<>1__state") is { } stateField ? stateField.Read<int>(address, interior) : -1;
            outerFirst.Add(Frame(type, state));
            if (Awaited(address, type, interior) is not { } awaited)
            {
                outerFirst.Reverse();
                return new AwaitedTask(outerFirst, state < 0 ? "nothing: the method is running or finished" : "a task the dump does not show");
            }

            current = awaited;
        }

        outerFirst.Reverse();
        return new AwaitedTask(outerFirst, DelegateOf(current) is { } run ? $"a Task.Run or StartNew delegate, {run}, which another thread runs" : Kind(current.Type));
    }

    // The method a delegate task runs (Task.Run, Task.Factory.StartNew), as a reader names it; null for any other task.
    private static string? DelegateOf(ClrObject task)
    {
        if (!task.TryReadObjectField("m_action", out var action) || !action.IsValid || action.IsNull || !action.IsDelegate)
        {
            return null;
        }

        return action.AsDelegate().GetDelegateTarget()?.Method is { } method
            ? FrameNames.TypeAndMethod($"x!{method.Type?.Name}.{method.Name}()")
            : ShortName(action.Type?.Name);
    }

    // The state machine of an async method's task, boxed inside it (Release: a struct) or referenced from it (Debug: a class).
    private static (ulong Address, ClrType Type, bool Interior)? StateMachine(ClrObject task)
    {
        if (task.Type is not { } type || !type.Name!.Contains("AsyncStateMachineBox", StringComparison.Ordinal)
            || type.GetFieldByName("StateMachine") is not { Type: { } machineType } field)
        {
            return null;
        }

        if (machineType.IsValueType)
        {
            return (field.GetAddress(task.Address), machineType, true);
        }

        var machine = field.ReadObject(task.Address, interior: false);
        return machine.IsValid && machine.Type is { } runtimeType ? (machine.Address, runtimeType, false) : null;
    }

    // The task the state machine's awaiter holds: the one awaiter field the suspended await has set (TaskAwaiter,
    // ConfiguredTaskAwaiter and their generic twins keep it in m_task; ValueTaskAwaiter in its ValueTask's _obj).
    private static ClrObject? Awaited(ulong address, ClrType machine, bool interior)
    {
        foreach (var field in machine.Fields.Where(f => f.Name?.StartsWith("<>u__", StringComparison.Ordinal) == true))
        {
            if (field.Type is not { } awaiterType)
            {
                continue;
            }

            if (!awaiterType.IsValueType)
            {
                var boxed = field.ReadObject(address, interior);
                if (boxed.IsValid && IsTask(boxed.Type))
                {
                    return boxed;
                }

                continue;
            }

            var awaiter = field.GetAddress(address, interior);
            if (awaiterType.GetFieldByName("m_task") is { } taskField && taskField.ReadObject(awaiter, interior: true) is { IsValid: true } awaitedTask)
            {
                return awaitedTask;
            }

            if (awaiterType.GetFieldByName("_value") is { Type: { } valueTask } value && valueTask.GetFieldByName("_obj") is { } obj
                && obj.ReadObject(value.GetAddress(awaiter, interior: true), interior: true) is { IsValid: true } source && IsTask(source.Type))
            {
                return source;
            }
        }

        return null;
    }

    // "<QueryAsync>d__3" in MockDatabase → MockDatabase.QueryAsync, at the await its state names.
    private AsyncFrame Frame(ClrType machine, int state)
    {
        var name = machine.Name ?? "?";
        var plus = name.LastIndexOf('+');
        var (declaring, nested) = plus < 0 ? ("", name) : (name[..plus], name[(plus + 1)..]);
        var method = nested.StartsWith('<') && nested.IndexOf('>', StringComparison.Ordinal) is > 1 and var close ? nested[1..close] : nested;
        var shortName = FrameNames.TypeAndMethod($"x!{declaring}.{method}()");
        if (state < 0)
        {
            return new AsyncFrame(shortName, null, "the method is not suspended at an await", state);
        }

        var moveNext = machine.Methods.FirstOrDefault(m => m.Name == "MoveNext");
        if (moveNext is null || machine.Module is not { Name: { } path } || !Path.IsPathRooted(path))
        {
            return new AsyncFrame(shortName, null, "the dump does not name its module's file", state);
        }

        var module = new ModuleFile(path, 0, machine.Module.Pdb?.Guid ?? Guid.Empty, machine.Module.Pdb?.Path);
        var (line, missing) = sources.AwaitLine(module, moveNext.MetadataToken, state);
        return new AsyncFrame(shortName, line, missing, state);
    }

    // The task <paramref name="task"/> is the continuation of: the one whose m_continuationObject is it (or a list holding it).
    private ClrObject? ContinuedFrom(ClrObject task)
    {
        if (_continuedFrom is null)
        {
            _continuedFrom = [];
            var tasks = new Dictionary<ClrType, bool>();
            foreach (var candidate in runtime.Heap.EnumerateObjects())
            {
                if (candidate.Type is not { } type || !(tasks.TryGetValue(type, out var isTask) ? isTask : tasks[type] = IsTask(type))
                    || !candidate.TryReadObjectField("m_continuationObject", out var continuation) || !continuation.IsValid)
                {
                    continue;
                }

                if (IsTask(continuation.Type))
                {
                    _continuedFrom.TryAdd(continuation.Address, candidate);
                }
                else if (continuation.TryReadObjectField("m_task", out var continuationTask) && continuationTask.IsValid && IsTask(continuationTask.Type))
                {
                    _continuedFrom.TryAdd(continuationTask.Address, candidate);
                }
                else if (continuation.Type?.Name?.StartsWith("System.Collections.Generic.List", StringComparison.Ordinal) == true
                    && continuation.TryReadObjectField("_items", out var items) && items.IsArray)
                {
                    foreach (var item in items.AsArray().ReadValues<ulong>(0, items.AsArray().Length) ?? [])
                    {
                        _continuedFrom.TryAdd(item, candidate);
                    }
                }
            }
        }

        return _continuedFrom.TryGetValue(task.Address, out var from) ? from : null;
    }

    // What the innermost async method awaits, as a reader names it.
    private static string Kind(ClrType? type) => LeafKind(type)
        ?? $"a {ShortName(type?.Name)} that no async method completes (a TaskCompletionSource's, an I/O callback's or a timer's)";

    // A task the runtime completes itself, named as the call that made it; null for any other.
    private static string? LeafKind(ClrType? type) => type?.Name switch
    {
        null => "a task the dump does not show",
        var name when name.StartsWith("System.Threading.Tasks.Task+DelayPromise", StringComparison.Ordinal) => "Task.Delay",
        var name when name.StartsWith("System.Threading.SemaphoreSlim+TaskNode", StringComparison.Ordinal) => "SemaphoreSlim.WaitAsync",
        var name when name.StartsWith("System.Threading.Tasks.Task+WhenAllPromise", StringComparison.Ordinal) => "Task.WhenAll",
        var name when name.StartsWith("System.Threading.Tasks.TaskFactory+CompleteOnInvokePromise", StringComparison.Ordinal) => "Task.WhenAny",
        _ => null,
    };

    // "System.Threading.Tasks.Task+UnwrapPromise`1[[System.Int32, …]]" → "UnwrapPromise".
    private static string ShortName(string? name)
    {
        var plain = (name ?? "?").Split('[', '<', '`')[0];
        return plain[(plain.LastIndexOfAny(['.', '+']) + 1)..];
    }

    private static bool IsWaitFrame(string method) => WaitFrames.Any(w => method.StartsWith(w, StringComparison.Ordinal));

    private static bool IsTask(ClrType? type)
    {
        for (; type is not null; type = type.BaseType)
        {
            if (type.Name == Task)
            {
                return true;
            }
        }

        return false;
    }
}

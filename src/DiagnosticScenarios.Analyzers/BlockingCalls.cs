using System.Collections.Concurrent;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Operations;

namespace DiagnosticScenarios.Analyzers;

/// <summary>How a call blocks the thread that makes it.</summary>
internal enum BlockKind
{
    None,

    /// <summary>A synchronous call whose type offers an awaitable twin (<c>ExecuteNonQuery</c>, <c>ExecuteNonQueryAsync</c>).</summary>
    SyncWithTwin,

    /// <summary>A wait with no awaitable twin on its type (<c>WaitHandle.WaitOne</c>, <c>Thread.Join</c>).</summary>
    KnownWait,

    /// <summary><c>.Result</c>, <c>.Wait()</c>, <c>.GetAwaiter().GetResult()</c>, <c>Task.WaitAll</c> (sync-over-async).</summary>
    TaskWait,

    Sleep,

    /// <summary>Taking from a <c>BlockingCollection</c> with a wait.</summary>
    CollectionTake,
}

/// <summary>A blocking call: what it is, how the rules name it, and what to await instead when there is one thing to await.</summary>
internal readonly record struct BlockingCall(BlockKind Kind, string Call, string Advice, string? Twin = null, IOperation? Task = null, bool TwinTakesToken = false);

/// <summary>
/// Recognises blocking calls. A synchronous method's awaitable twin is found from its type's members, as CA1849 and
/// VSTHRD103 do: a method named <c>…Async</c> taking the same parameters, a <c>CancellationToken</c> optionally last.
/// </summary>
internal sealed class BlockingCalls(KnownSymbols known)
{
    private static readonly BlockingCall NotBlocking = new(BlockKind.None, string.Empty, string.Empty);

    private readonly ConcurrentDictionary<IMethodSymbol, Twin?> _twins = new(SymbolEqualityComparer.Default);
    private Func<IMethodSymbol, Twin?>? _findTwin;

    private sealed record Twin(string Name, bool TakesToken);

    public BlockingCall Classify(IOperation operation) => operation switch
    {
        IInvocationOperation invocation => Classify(invocation),
        IPropertyReferenceOperation { Property.Name: "Result", Instance: { } task } reference
            when KnownSymbols.Is(reference.Property.ContainingType, known.TaskOfT) || KnownSymbols.Is(reference.Property.ContainingType, known.ValueTaskOfT)
            => new BlockingCall(BlockKind.TaskWait, reference.Property.ContainingType.Name + ".Result", "await the task instead", Task: task),
        _ => NotBlocking,
    };

    private BlockingCall Classify(IInvocationOperation invocation)
    {
        var method = invocation.TargetMethod;
        var type = method.ContainingType;
        if (type is null)
        {
            return NotBlocking;
        }

        if (KnownSymbols.Is(type, known.Task))
        {
            return method.Name switch
            {
                "Wait" when !HasZeroTimeout(invocation) => new BlockingCall(BlockKind.TaskWait, "Task.Wait", "await the task instead", Task: invocation.Instance),
                "WaitAll" => new BlockingCall(BlockKind.TaskWait, "Task.WaitAll", "await Task.WhenAll instead"),
                "WaitAny" when !HasZeroTimeout(invocation) => new BlockingCall(BlockKind.TaskWait, "Task.WaitAny", "await Task.WhenAny instead"),
                _ => NotBlocking,
            };
        }

        if (method.Name == "GetResult" && IsAwaiter(type) && invocation.Instance is IInvocationOperation { TargetMethod.Name: "GetAwaiter" } getAwaiter)
        {
            return new BlockingCall(BlockKind.TaskWait, "GetAwaiter().GetResult()", "await the task instead", Task: getAwaiter.Instance);
        }

        if (KnownSymbols.Is(type, known.Thread))
        {
            return method.Name switch
            {
                "Sleep" when !HasZeroTimeout(invocation) => new BlockingCall(BlockKind.Sleep, "Thread.Sleep", "await 'Task.Delay' instead", "Delay"),
                "Join" => new BlockingCall(BlockKind.KnownWait, "Thread.Join", "run the work as a Task and await it instead"),
                _ => NotBlocking,
            };
        }

        if (KnownSymbols.Is(type, known.BlockingCollection))
        {
            return method.Name is "Take" or "TakeFromAny" or "GetConsumingEnumerable" || method.Name.StartsWith("TryTake", StringComparison.Ordinal) && HasNonZeroTimeout(invocation)
                ? new BlockingCall(BlockKind.CollectionTake, "BlockingCollection." + method.Name, "read a Channel<T> with 'await ReadAsync' instead")
                : NotBlocking;
        }

        if (KnownWaitAdvice(method, type) is { } advice)
        {
            return HasZeroTimeout(invocation) ? NotBlocking : new BlockingCall(BlockKind.KnownWait, type.Name + "." + method.Name, advice);
        }

        if (TwinOf(method) is { } twin && !IsInMemory(invocation.Instance) && !HasZeroTimeout(invocation))
        {
            return new BlockingCall(BlockKind.SyncWithTwin, type.Name + "." + method.Name, $"await '{twin.Name}' instead", twin.Name, TwinTakesToken: twin.TakesToken);
        }

        if (EfTwinOf(invocation) is { } efTwin)
        {
            return new BlockingCall(BlockKind.SyncWithTwin, type.Name + "." + method.Name, $"await '{efTwin}' instead");
        }

        return NotBlocking;
    }

    private string? KnownWaitAdvice(IMethodSymbol method, INamedTypeSymbol type)
    {
        const string Signal = "await a TaskCompletionSource's Task (or SemaphoreSlim.WaitAsync) instead";
        return method.Name switch
        {
            "WaitOne" or "WaitAll" or "WaitAny" when KnownSymbols.DerivesFrom(type, known.WaitHandle) => Signal,
            "Wait" when KnownSymbols.Is(type, known.ManualResetEventSlim) || KnownSymbols.Is(type, known.CountdownEvent) => Signal,
            "Wait" when KnownSymbols.Is(type, known.Monitor) => Signal,
            "SignalAndWait" when KnownSymbols.Is(type, known.Barrier) => Signal,
            _ => null,
        };
    }

    private static bool IsAwaiter(INamedTypeSymbol type) =>
        type.Name.EndsWith("Awaiter", StringComparison.Ordinal)
        && type.ContainingNamespace?.ToDisplayString() == "System.Runtime.CompilerServices";

    private bool IsInMemory(IOperation? instance)
    {
        var type = instance?.Type;
        return type is not null && known.InMemoryIo.Any(memory => KnownSymbols.DerivesFrom(type, memory));
    }

    // A wait of zero only looks: Wait(0), WaitOne(0), Thread.Sleep(0), TryTake(out x, 0).
    private static bool HasZeroTimeout(IInvocationOperation invocation)
    {
        foreach (var argument in invocation.Arguments)
        {
            if (IsTimeout(argument) && IsZero(argument.Value))
            {
                return true;
            }
        }

        return false;
    }

    private static bool HasNonZeroTimeout(IInvocationOperation invocation)
    {
        foreach (var argument in invocation.Arguments)
        {
            if (IsTimeout(argument) && !IsZero(argument.Value))
            {
                return true;
            }
        }

        return false;
    }

    private static bool IsTimeout(IArgumentOperation argument) =>
        argument.Parameter is { } parameter
        && (parameter.Name.IndexOf("timeout", StringComparison.OrdinalIgnoreCase) >= 0 || parameter.Name is "millisecondsDelay" or "delay" or "dueTime");

    private static bool IsZero(IOperation value) =>
        value.ConstantValue is { HasValue: true, Value: 0 }
        || value is IFieldReferenceOperation { Field.Name: "Zero", Field.ContainingType.Name: "TimeSpan" };

    // The delegate made once: a method group would allocate one per call.
    private Twin? TwinOf(IMethodSymbol method) => _twins.GetOrAdd(method.OriginalDefinition, _findTwin ??= FindTwin);

    private Twin? FindTwin(IMethodSymbol method)
    {
        if (method.MethodKind != MethodKind.Ordinary || method.Name.EndsWith("Async", StringComparison.Ordinal) || method.Name == "Dispose"
            || known.IsTaskLike(method.ReturnType) || IsExempt(method))
        {
            return null;
        }

        // Found once any overload fits; whether one of them also takes a token the fix can pass on. Types of the
        // event-based era (WebClient) name their task-returning twins …TaskAsync.
        foreach (var name in new[] { method.Name + "Async", method.Name + "TaskAsync" })
        {
            var found = false;
            var anyTakesToken = false;
            foreach (var type in TypeAndAncestors(method.ContainingType))
            {
                foreach (var member in type.GetMembers(name))
                {
                    if (member is IMethodSymbol candidate && IsTwin(method, candidate, out var takesToken))
                    {
                        found = true;
                        anyTakesToken |= takesToken;
                    }
                }
            }

            if (found)
            {
                return new Twin(name, anyTakesToken);
            }
        }

        return null;
    }

    // Synchronous calls whose twin exists for other reasons than I/O: EF Core's Add (the twin is for special value
    // generators) and cancelling (the twin only runs the callbacks elsewhere).
    private bool IsExempt(IMethodSymbol method) =>
        method.Name is "Add" or "AddRange" or "Attach" or "AttachRange" && method.ContainingNamespace?.ToDisplayString() == "Microsoft.EntityFrameworkCore"
        || KnownSymbols.Is(method.ContainingType, known.CancellationTokenSource);

    private static IEnumerable<INamedTypeSymbol> TypeAndAncestors(INamedTypeSymbol type)
    {
        for (var current = type; current is not null; current = current.BaseType)
        {
            yield return current;
        }

        if (type.TypeKind == TypeKind.Interface)
        {
            foreach (var inherited in type.AllInterfaces)
            {
                yield return inherited;
            }
        }
    }

    private bool IsTwin(IMethodSymbol method, IMethodSymbol candidate, out bool takesToken)
    {
        takesToken = false;
        if (candidate.IsStatic != method.IsStatic || !known.IsTaskLike(candidate.ReturnType)
            || candidate.DeclaredAccessibility != Accessibility.Public && !IsInSourceOf(candidate)
            || candidate.TypeParameters.Length != method.TypeParameters.Length
            || known.ObsoleteAttribute is { } obsolete && candidate.GetAttributes().Any(a => SymbolEqualityComparer.Default.Equals(a.AttributeClass, obsolete)))
        {
            return false;
        }

        var parameters = candidate.Parameters;
        var count = parameters.Length;
        if (count > 0 && KnownSymbols.Is(parameters[count - 1].Type, known.CancellationToken) && !HasTokenAt(method, count - 1))
        {
            takesToken = true;
            count--;
        }

        if (count != method.Parameters.Length)
        {
            return false;
        }

        for (var i = 0; i < count; i++)
        {
            if (!SameParameterType(method.Parameters[i].Type, parameters[i].Type) || method.Parameters[i].RefKind != parameters[i].RefKind)
            {
                return false;
            }
        }

        return true;
    }

    private static bool HasTokenAt(IMethodSymbol method, int index) =>
        index < method.Parameters.Length && method.Parameters[index].Type.Name == "CancellationToken";

    private static bool IsInSourceOf(IMethodSymbol candidate) => candidate.DeclaringSyntaxReferences.Length > 0;

    private static bool SameParameterType(ITypeSymbol sync, ITypeSymbol twin) =>
        sync is ITypeParameterSymbol { TypeParameterKind: TypeParameterKind.Method } a
            ? twin is ITypeParameterSymbol { TypeParameterKind: TypeParameterKind.Method } b && a.Ordinal == b.Ordinal
            : SymbolEqualityComparer.Default.Equals(sync, twin) || SameSpanAsMemory(sync, twin);

    // Stream.Read(Span<byte>) and ReadAsync(Memory<byte>, CancellationToken) are twins too, though no fix writes that one.
    private static bool SameSpanAsMemory(ITypeSymbol sync, ITypeSymbol twin) =>
        sync is INamedTypeSymbol { Name: "Span" or "ReadOnlySpan", TypeArguments.Length: 1 } span
        && twin is INamedTypeSymbol { TypeArguments.Length: 1 } memory
        && memory.Name == (span.Name == "Span" ? "Memory" : "ReadOnlyMemory")
        && SymbolEqualityComparer.Default.Equals(span.TypeArguments[0], memory.TypeArguments[0]);

    // EF Core's queries run when enumerated: ToList() on an IQueryable is a blocking query whose twin is an extension
    // method of EntityFrameworkQueryableExtensions rather than a member of the LINQ type.
    private string? EfTwinOf(IInvocationOperation invocation)
    {
        var method = invocation.TargetMethod;
        if (known.EfQueryableExtensions is not { } ef || !method.IsExtensionMethod
            || !KnownSymbols.Is(method.ContainingType, known.Enumerable) && !KnownSymbols.Is(method.ContainingType, known.Queryable)
            || invocation.Arguments.Length == 0)
        {
            return null;
        }

        var source = invocation.Arguments[0].Value;
        while (source is IConversionOperation conversion)
        {
            source = conversion.Operand;
        }

        if (!KnownSymbols.Implements(source.Type, known.IQueryable))
        {
            return null;
        }

        var name = method.Name + "Async";
        return ef.GetMembers(name).Length > 0 ? name : null;
    }
}

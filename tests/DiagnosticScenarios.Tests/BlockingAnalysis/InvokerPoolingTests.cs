using DiagnosticScenarios.BlockingAnalysis;

namespace DiagnosticScenarios.Tests.BlockingAnalysis;

/// <summary>
/// Which threads one request label names when the JIT inlined the app's code into an invoker ASP.NET Core compiled at run
/// time: every thread under the same numbered invoker, whatever its stack below; never one under another number, and never
/// one under an invoker a dump leaves unnumbered.
/// </summary>
public sealed class InvokerPoolingTests
{
    private const string Invoker = "dynamicClass!lambda_method12(pMT: class System.Object)";
    private const string OtherInvoker = "dynamicClass!lambda_method13(pMT: class System.Object)";
    private const string Unnumbered = "dynamicClass!lambda_method";
    private const string Wait = "System.Private.CoreLib!System.Threading.Tasks.Task.Wait()";
    private const string Spin = "System.Private.CoreLib!System.Threading.SpinWait.SpinOnce()";

    [Fact]
    public void ByInvoker_PoolsEveryThreadUnderOneNumberedInvoker_AndNoOtherThread()
    {
        var threads = new Dictionary<int, ResolvedStack>
        {
            [1] = Under(Invoker, Wait),
            [2] = Under(Invoker, Spin),
            [3] = Under(Invoker, Wait),
            [4] = Under(OtherInvoker, Wait),
            [5] = Under(Unnumbered, Wait),
            [6] = Under(Unnumbered, Wait),
            [7] = NotInlined(Wait),
        };

        var pooled = StackSnapshots.ByInvoker(threads);

        // Two stacks below lambda_method12, one pool: a label on any of threads 1-3 names all three.
        Assert.Equal([1, 2, 3], pooled[Invoker]);
        Assert.Equal([4], pooled[OtherInvoker]);
        // A dump names every compiled invoker lambda_method: its threads pool only with an identical stack.
        Assert.Equal([5, 6], pooled[threads[5].Key]);
        Assert.Equal(3, pooled.Count);
        Assert.DoesNotContain(pooled.Values, ids => ids.Contains(7));
    }

    [Fact]
    public void ByInvoker_KeepsThreadsUnderUnnumberedInvokersApart_WhenTheirStacksDiffer()
    {
        var threads = new Dictionary<int, ResolvedStack>
        {
            [1] = Under(Unnumbered, Wait),
            [2] = Under(Unnumbered, Spin),
        };

        var pooled = StackSnapshots.ByInvoker(threads);

        Assert.Equal([1], pooled[threads[1].Key]);
        Assert.Equal([2], pooled[threads[2].Key]);
    }

    // A stack whose app frames the JIT inlined into the invoker: its leaf, then the invoker and ASP.NET Core's caller of it.
    private static ResolvedStack Under(string invoker, string leaf)
    {
        TraceFrame[] frames =
        [
            Frame(leaf),
            new(invoker, "dynamicClass", null, invoker.Split('!')[1], 0x2000),
            Frame("Microsoft.AspNetCore.Mvc.Core!Microsoft.AspNetCore.Mvc.Infrastructure.ActionMethodExecutor+SyncObjectResultExecutor.Execute()"),
        ];
        return new ResolvedStack([.. frames.Select(f => f.Name)], [], new InlinedInvoker(invoker, [frames[2].Name]), UnderTaskRun: false)
        {
            Frames = frames,
            InvokerIndex = 1,
        };
    }

    private static ResolvedStack NotInlined(string leaf)
    {
        TraceFrame[] frames = [Frame(leaf), Frame("Contoso.Orders!Contoso.Orders.OrdersController.Get()")];
        return new ResolvedStack([.. frames.Select(f => f.Name)], [], null, UnderTaskRun: false) { Frames = frames };
    }

    private static TraceFrame Frame(string name) => new(name, name.Split('!')[0], $"/app/{name.Split('!')[0]}.dll", name.Split('!')[1], 0x1000);
}

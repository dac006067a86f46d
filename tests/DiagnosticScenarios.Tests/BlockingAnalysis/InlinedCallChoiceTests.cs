using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;
using DiagnosticScenarios.BlockingAnalysis;

namespace DiagnosticScenarios.Tests.BlockingAnalysis;

/// <summary>
/// Which of an endpoint's blocking calls a stack names when the JIT inlined them all into the invoker, read from the IL of
/// Contoso.Orders' Release build: <c>GET /orders/7/invoice</c> waits twice, on <c>.Result</c> (OrderService.cs:42) and on
/// <c>.Wait()</c> (OrderService.cs:57). The frame left above the invoker, the framework's own IL, the awaited async method
/// and the other stacks of the same code decide; what none of them decides is said.
/// </summary>
public sealed class InlinedCallChoiceTests : IDisposable
{
    private const string GetResultCore = "System.Threading.Tasks.Task`1.GetResultCore";
    private const string InternalWait = "System.Threading.Tasks.Task.InternalWait";

    private static readonly string CoreLib = typeof(object).Assembly.Location;

    private readonly FixtureApp _app = FixtureApp.ContosoOrders("Release");
    private readonly ModuleReaders _modules = new();
    private readonly IlCalls _calls;

    public InlinedCallChoiceTests() => _calls = new IlCalls(_modules);

    [Fact]
    public void AFrameOnlyResultLeaves_NamesTheResult_AndNoOtherCall()
    {
        var chain = Chain(GetResultCore);

        Assert.Equal(("OrderService.LoadOrder", 1), (chain.Calls[^1].Method, chain.Fits));
    }

    [Fact]
    public void AFrameBothCallsLeave_NamesTheFirst_AndSaysTwoFit()
    {
        var chain = Chain(InternalWait);

        Assert.Equal(("OrderService.LoadOrder", 2), (chain.Calls[^1].Method, chain.Fits));
    }

    [Fact]
    public void AFrameBothCallsLeave_NamesTheCallInTheMethodThatCallsTheAwaitedAsyncMethod()
    {
        var chain = Chain(InternalWait, awaitedMethod: "InvoiceSender.SendAsync");

        Assert.Equal(("OrderService.Deliver", 1), (chain.Calls[^1].Method, chain.Fits));
    }

    [Fact]
    public void AFrameBothCallsLeave_NamesTheOtherCall_WhenAnotherStackOfTheSameCodeWasNamedAtTheFirst()
    {
        var result = Chain(GetResultCore).Calls[^1];

        var chain = Chain(InternalWait, taken: new HashSet<(int, int)> { (result.MethodToken, result.IlOffset) });

        Assert.Equal(("OrderService.Deliver", 1), (chain.Calls[^1].Method, chain.Fits));
    }

    [Fact]
    public void WithoutTheFrameworksIl_EveryCallOfTheWaitsTypeFits()
    {
        var chain = _calls.ChainTo(_app.ServerOptions.AppPath, InvoiceToken(), GetResultCore);

        Assert.NotNull(chain);
        Assert.Equal(("OrderService.LoadOrder", 2), (chain.Calls[^1].Method, chain.Fits));
    }

    public void Dispose() => _modules.Dispose();

    private FittingChain Chain(string callee, string? awaitedMethod = null, IReadOnlySet<(int, int)>? taken = null)
    {
        var chain = _calls.ChainTo(_app.ServerOptions.AppPath, InvoiceToken(), callee, CoreLib, awaitedMethod, taken);
        Assert.NotNull(chain);
        Assert.Equal(["OrdersController.Invoice", "OrderService.SendInvoice"], chain.Calls.Take(2).Select(c => c.Method));
        return chain;
    }

    private int InvoiceToken()
    {
        using var pe = new System.Reflection.PortableExecutable.PEReader(File.OpenRead(_app.ServerOptions.AppPath));
        var metadata = pe.GetMetadataReader();
        var method = metadata.TypeDefinitions.Select(metadata.GetTypeDefinition)
            .Where(t => metadata.GetString(t.Name) == "OrdersController")
            .SelectMany(t => t.GetMethods())
            .Single(m => metadata.GetString(metadata.GetMethodDefinition(m).Name) == "Invoice");
        return MetadataTokens.GetToken(method);
    }
}

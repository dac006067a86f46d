using DiagnosticScenarios.BlockingAnalysis;

namespace DiagnosticScenarios.Tests.BlockingAnalysis;

public sealed class FrameNamesTests
{
    [Theory]
    [InlineData("DiagnosticScenarios!DiagnosticScenarios.Scenarios.Mock.StarvationScenariosController.TaskWait(value class System.Nullable`1<int32>)",
        "StarvationScenariosController.TaskWait")]
    [InlineData("System.Private.CoreLib!System.Threading.Tasks.Task`1[System.__Canon].get_Result()", "Task`1.get_Result")]
    [InlineData("Contoso.Orders!Contoso.Orders.Services.OrderService+<>c__DisplayClass5_0.<GetTotal>b__0()",
        "OrderService+<>c__DisplayClass5_0.<GetTotal>b__0")]

    // An async method's body runs in its state machine's MoveNext (a class in Debug, a struct in Release: the same name).
    [InlineData("Npgsql!Npgsql.NpgsqlCommand+<ExecuteReader>d__120.MoveNext()", "NpgsqlCommand.ExecuteReader")]
    [InlineData("Contoso.Orders!Contoso.Orders.Outer+Inner+<GetAsync>d__3.MoveNext()", "Outer+Inner.GetAsync")]

    // An async lambda's state machine is left as the compiler named it: no method of that name is in the code.
    [InlineData("Contoso.Orders!Contoso.Orders.Program+<>c+<<Main>b__0_0>d.MoveNext()", "Program+<>c+<<Main>b__0_0>d.MoveNext")]

    // A minimal API built with ASP.NET Core's request delegate generator (Fabrikam.Stock, Release,
    // -p:EnableRequestDelegateGenerator=true): its handler is a type declared `file` in generated code.
    [InlineData("Fabrikam.Stock!Microsoft.AspNetCore.Http.Generated.<GeneratedRouteBuilderExtensions_g>F3657344619D0719F8479B9EE93490879C486D1DD580E15EF074C160DE9232180__GeneratedRouteBuilderExtensionsCore+<>c__DisplayClass3_0+<<MapGet1>g__RequestHandler|5>d.MoveNext()",
        "GeneratedRouteBuilderExtensionsCore+<>c__DisplayClass3_0+<<MapGet1>g__RequestHandler|5>d.MoveNext")]
    public void TypeAndMethod_IsTheTypeAsDeclaredAndTheMethod(string frame, string expected) =>
        Assert.Equal(expected, FrameNames.TypeAndMethod(frame));
}

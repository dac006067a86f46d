using Microsoft.AspNetCore.Http.HttpResults;

namespace DiagnosticScenarios.Problems;

/// <summary>The titles of the app's ProblemDetails that several places write.</summary>
public static class ProblemTitles
{
    /// <summary>A 400 for parameters (or a query string) that are not valid: model binding, the controls, the input rules, the stream.</summary>
    public const string InvalidParameters = "One or more parameters are not valid.";
}

/// <summary>
/// The one 400 for parameters that are not valid, wherever it is raised (model binding, the input rules, the controls,
/// the stream, the live page's own server): <see cref="ProblemTitles.InvalidParameters"/>, an <c>errors</c> entry per
/// parameter, and every message joined in <c>detail</c>.
/// </summary>
public static class ParameterProblem
{
    /// <summary>Written through the app's ProblemDetails service, which adds its type, instance and trace id.</summary>
    public static ValidationProblem Result(IDictionary<string, string[]> errors) =>
        TypedResults.ValidationProblem(errors, detail: Detail(errors), title: ProblemTitles.InvalidParameters);

    /// <summary>The same answer for a server that is not ASP.NET Core's (the live page's, on threads of its own).</summary>
    public static HttpValidationProblemDetails Details(IDictionary<string, string[]> errors, string instance) =>
        new(errors) { Status = StatusCodes.Status400BadRequest, Title = ProblemTitles.InvalidParameters, Detail = Detail(errors), Instance = instance };

    private static string Detail(IDictionary<string, string[]> errors) => string.Join(" ", errors.SelectMany(e => e.Value));
}

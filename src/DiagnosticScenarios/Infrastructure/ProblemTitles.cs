namespace DiagnosticScenarios.Infrastructure;

/// <summary>The titles of the app's ProblemDetails that several places write.</summary>
public static class ProblemTitles
{
    /// <summary>A 400 for parameters (or a query string) that are not valid: model binding, the controls, the input rules, the stream.</summary>
    public const string InvalidParameters = "One or more parameters are not valid.";
}

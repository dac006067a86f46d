using DiagnosticScenarios.Problems;

namespace DiagnosticScenarios.PoolHealth.Controls;

/// <summary>
/// The controls' query parameters, parsed by hand so that a value that is not a number ("abc") gets the same
/// ProblemDetails, naming the parameter and its range, as one out of range: minimal-API binding answers a bare 400.
/// </summary>
internal sealed class ControlParameters
{
    private readonly Dictionary<string, string[]> _errors = new(StringComparer.Ordinal);

    public bool HasErrors => _errors.Count > 0;

    public int Count(string name, string? value, int min, int max, int? fallback)
    {
        if (string.IsNullOrEmpty(value))
        {
            if (fallback is null)
            {
                _errors[name] = [$"A value for {name} is required: a whole number from {min} to {max}."];
            }

            return fallback ?? 0;
        }

        if (!StrictBinding.TryParseWholeNumber(value, out var count) || count < min || count > max)
        {
            _errors[name] = [$"The value '{value}' is not valid: {name} must be a whole number from {min} to {max}."];
        }

        return count;
    }

    public void Error(string name, string message) => _errors[name] = [message];

    public IResult Problem() => ParameterProblem.Result(_errors);
}

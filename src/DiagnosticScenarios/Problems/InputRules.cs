namespace DiagnosticScenarios.Problems;

/// <summary>
/// Input that model binding would quietly misread is refused with a 400 ProblemDetails before any endpoint runs:
/// a query parameter given twice (binding takes the first), given without a value (binding reads it as "not given", so
/// <c>taskburst?count=</c> would start the default burst of 1000 blocking tasks), or a control character such as NUL
/// anywhere in the path or query (number parsing ignores trailing NULs, so <c>1%00</c> would read as 1).
/// </summary>
public static class InputRules
{
    public static IApplicationBuilder UseInputRules(this IApplicationBuilder app) =>
        app.Use(next => context =>
        {
            // On every request: a request that breaks no rule allocates nothing here.
            Dictionary<string, string[]>? errors = null;
            if (HasControlCharacter(context.Request.Path.Value))
            {
                (errors ??= new(StringComparer.Ordinal))["path"] = ["The path holds a control character (such as NUL)."];
            }

            foreach (var (name, values) in context.Request.Query)
            {
                if (values.Count > 1)
                {
                    (errors ??= new(StringComparer.Ordinal))[name] = [$"{name} is given {values.Count} times; give it once."];
                }
                else if (string.IsNullOrEmpty(values.ToString()))
                {
                    (errors ??= new(StringComparer.Ordinal))[name] = [$"{name} is given without a value; give a value or leave {name} out."];
                }
                else if (HasControlCharacter(name) || HasControlCharacter(values.ToString()))
                {
                    (errors ??= new(StringComparer.Ordinal))[name] = [$"The value of {name} holds a control character (such as NUL)."];
                }
            }

            return errors is null
                ? next(context)
                : ParameterProblem.Result(errors)
                    .ExecuteAsync(context);
        });

    private static bool HasControlCharacter(string? text) => text is not null && text.AsSpan().IndexOfAnyInRange('\0', '\u001F') >= 0;
}

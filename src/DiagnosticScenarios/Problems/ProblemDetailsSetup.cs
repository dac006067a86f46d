using System.ComponentModel.DataAnnotations;
using Microsoft.AspNetCore.Mvc;
using Microsoft.AspNetCore.Mvc.Controllers;
using Microsoft.AspNetCore.Mvc.ModelBinding;

namespace DiagnosticScenarios.Problems;

public static class ProblemDetailsSetup
{
    /// <summary>
    /// Controllers whose every error is an RFC 9457 ProblemDetails that names the parameter and its range.
    /// </summary>
    public static IServiceCollection AddScenarioControllers(this IServiceCollection services)
    {
        services.AddProblemDetails(options => options.CustomizeProblemDetails = context =>
        {
            var request = context.HttpContext.Request;
            context.ProblemDetails.Detail ??= context.Exception is BadHttpRequestException refused ? refused.Message : context.ProblemDetails.Status switch
            {
                StatusCodes.Status404NotFound => $"No endpoint answers {request.Path}. Every route is listed at /swagger.",
                StatusCodes.Status405MethodNotAllowed => $"{request.Path} does not answer {request.Method}; it answers {context.HttpContext.Response.Headers.Allow}.",
                _ => null,
            };
            context.ProblemDetails.Instance ??= request.Path;
        });

        services.AddControllers()
            .ConfigureApiBehaviorOptions(options =>
                options.InvalidModelStateResponseFactory = CreateValidationProblem)
            .AddMvcOptions(options =>
            {
                options.ModelBinderProviders.UseStrictBinding();
                // No action binds a form. Left in, model binding reads a form-encoded body (curl -d sends one) before the
                // action runs: bodyread-async would find it already read, and a body over Kestrel's limit would be a 400
                // naming no parameter instead of its 413.
                options.ValueProviderFactories.RemoveType<FormValueProviderFactory>();
                options.ValueProviderFactories.RemoveType<FormFileValueProviderFactory>();
                options.ValueProviderFactories.RemoveType<JQueryFormValueProviderFactory>();
                var messages = options.ModelBindingMessageProvider;
                messages.SetValueIsInvalidAccessor(value => $"The value '{value}' is not a valid number.");
                messages.SetAttemptedValueIsInvalidAccessor((value, name) => $"The value '{value}' is not valid for {name}.");
                messages.SetNonPropertyAttemptedValueIsInvalidAccessor(value => $"The value '{value}' is not valid.");
                messages.SetMissingBindRequiredValueAccessor(name => $"A value for {name} is required.");
                messages.SetValueMustNotBeNullAccessor(name => $"A value for {name} is required.");
            });

        return services;
    }

    // Adds the accepted range to binding errors ("abc" for an int), so every 400 says what would have been valid.
    private static ExecutesResult CreateValidationProblem(ActionContext context)
    {
        var parameters = context.ActionDescriptor.Parameters.OfType<ControllerParameterDescriptor>().ToList();
        var errors = new Dictionary<string, string[]>(StringComparer.OrdinalIgnoreCase);

        foreach (var (key, entry) in context.ModelState)
        {
            if (entry.Errors.Count == 0)
            {
                continue;
            }

            var hint = DescribeAccepted(parameters.FirstOrDefault(p => string.Equals(p.Name, key, StringComparison.OrdinalIgnoreCase)));
            errors[key] = hint is null
                ? entry.Errors.Select(e => string.IsNullOrEmpty(e.ErrorMessage) ? $"The value for {key} is not valid." : e.ErrorMessage).ToArray()
                : [$"The value '{entry.AttemptedValue}' is not valid: {hint}"];
        }

        return new ExecutesResult(ParameterProblem.Result(errors));
    }

    /// <summary>An <see cref="IResult"/> where MVC wants an <see cref="IActionResult"/>, so binding errors are written as every other 400.</summary>
    private sealed class ExecutesResult(IResult result) : IActionResult
    {
        public Task ExecuteResultAsync(ActionContext context) => result.ExecuteAsync(context.HttpContext);
    }

    private static string? DescribeAccepted(ControllerParameterDescriptor? parameter)
    {
        if (parameter is null)
        {
            return null;
        }

        var range = parameter.ParameterInfo.GetCustomAttributes(typeof(RangeAttribute), inherit: false)
            .OfType<RangeAttribute>()
            .FirstOrDefault();
        if (range is not null)
        {
            return $"{parameter.Name} must be a whole number from {range.Minimum} to {range.Maximum}.";
        }

        var type = Nullable.GetUnderlyingType(parameter.ParameterType) ?? parameter.ParameterType;
        return type.IsEnum
            ? $"{parameter.Name} must be one of: {string.Join(", ", Enum.GetNames(type).Select(n => n.ToLowerInvariant()))}."
            : null;
    }
}

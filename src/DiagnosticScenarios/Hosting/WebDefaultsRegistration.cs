using DiagnosticScenarios.Problems;
using DiagnosticScenarios.Security;
using Microsoft.Extensions.DependencyInjection.Extensions;

namespace DiagnosticScenarios.Hosting;

/// <summary>What every feature stands on: ProblemDetails for every error, the input rules, AllowedHosts, the app's origins, the OpenAPI document.</summary>
public static class WebDefaultsRegistration
{
    public static IServiceCollection AddWebDefaults(this IServiceCollection services)
    {
        services.AddScenarioControllers();
        services.AddAllowedHosts();
        services.TryAddSingleton<AppOrigins>();
        services.AddOpenApi();
        return services;
    }

    /// <summary>
    /// Unhandled exceptions and empty 4xx answers (unknown route, wrong method) become ProblemDetails; every answer carries
    /// the framing, sniffing and content policies (<see cref="SecurityHeaders"/>); a Host outside
    /// AllowedHosts, a query parameter given twice or empty, or a control character in the path or query is a 400.
    /// </summary>
    public static IApplicationBuilder UseWebDefaults(this IApplicationBuilder app)
    {
        app.UseExceptionHandler(new ExceptionHandlerOptions
        {
            // A request Kestrel refuses while the app reads it (a body over the 30 MB limit: 413; an upload too slow: 408)
            // is the client's error, answered with its own status rather than a 500, and not logged as the app's failure.
            StatusCodeSelector = exception => exception is BadHttpRequestException refused ? refused.StatusCode : StatusCodes.Status500InternalServerError,
            SuppressDiagnosticsCallback = context => context.Exception is BadHttpRequestException,
        });
        app.UseStatusCodePages();
        app.UseSecurityHeaders();
        app.UseAllowedHosts();
        app.UseInputRules();
        return app.UseSwaggerUI(options => options.SwaggerEndpoint("/openapi/v1.json", "DiagnosticScenarios"));
    }

    /// <summary>The OpenAPI document at <c>/openapi/v1.json</c>; Swagger UI reads it at <c>/swagger</c>.</summary>
    public static IEndpointRouteBuilder MapApiDocumentation(this IEndpointRouteBuilder endpoints)
    {
        endpoints.MapOpenApi();
        return endpoints;
    }
}

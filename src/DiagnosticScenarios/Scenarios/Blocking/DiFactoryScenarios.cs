using System.ComponentModel.DataAnnotations;
using DiagnosticScenarios.Common;
using DiagnosticScenarios.Problems;
using Microsoft.AspNetCore.Mvc;

namespace DiagnosticScenarios.Scenarios.Blocking;

/// <summary>
/// Per-request settings that come from a slow store: built by a DI factory that blocks on the store's async load when the
/// request's services are resolved, or loaded by the action with <c>await</c>.
/// </summary>
[ApiController]
[Route("api/blocking")]
[Produces("text/plain")]
public sealed class DiFactoryScenariosController : ControllerBase
{
    /// <summary>
    /// BAD: resolves the request's <see cref="TenantSettings"/>, whose DI factory reads <c>.Result</c> on the store's async load
    /// (<see cref="DiFactoryScenarios.AddTenantSettings"/>), so resolving them parks a pool thread for the whole load.
    /// </summary>
    /// <remarks>The block hides in the container, where a reader of the action never sees it.</remarks>
    /// <param name="delayMs">How long the settings store takes to answer, in milliseconds (0–60000, default 200).</param>
    [HttpGet("difactory")]
    public string Resolve([FromQuery, Range(0, ScenarioLimits.MaxDelayMs)] int? delayMs)
    {
        // Resolved here, once delayMs is known to be valid (the factory reads it), as a constructor or [FromServices] would per request.
        _ = HttpContext.RequestServices.GetRequiredService<TenantSettings>();
        return "success:blocking-difactory";
    }

    /// <summary>GOOD: the action awaits the store's load itself; no thread is held while the store takes its time.</summary>
    /// <param name="store">The settings store, a singleton that is cheap to resolve.</param>
    /// <param name="delayMs">How long the settings store takes to answer, in milliseconds (0–60000, default 200).</param>
    /// <param name="cancellationToken">Cancelled when the client goes away; the load is abandoned with it.</param>
    [HttpGet("difactory-async")]
    public async Task<string> LoadAsync([FromServices] TenantSettingsStore store, [FromQuery, Range(0, ScenarioLimits.MaxDelayMs)] int? delayMs, CancellationToken cancellationToken)
    {
        // GOOD: the asynchronous initialisation is awaited by the action instead of blocked on in a DI factory; that is the one difference.
        _ = await store.LoadAsync(Delay(delayMs), cancellationToken);
        return "success:blocking-difactory-async";
    }

    internal static TimeSpan Delay(int? delayMs) => TimeSpan.FromMilliseconds(delayMs ?? BlockingDefaults.DiFactoryDelayMs);
}

/// <summary>The BAD factory of the difactory pair, registered with the app's services.</summary>
public static class DiFactoryScenarios
{
    /// <summary>Registers the settings store and <see cref="TenantSettings"/>, built per request by a factory that blocks on the store.</summary>
    public static IServiceCollection AddTenantSettings(this IServiceCollection services)
    {
        services.AddHttpContextAccessor();
        services.AddSingleton<TenantSettingsStore>();
        services.AddScoped(provider =>
        {
            var store = provider.GetRequiredService<TenantSettingsStore>();
            var delay = DiFactoryScenariosController.Delay(RequestedDelayMs(provider.GetRequiredService<IHttpContextAccessor>().HttpContext));
#pragma warning disable VSTHRD002, DSB002 // deliberate: this factory demonstrates sync-over-async where a reader of the action never looks
            // BAD: a DI factory cannot await, so .Result parks the pool thread resolving this request's services for the whole load.
            return store.LoadAsync(delay).Result;
#pragma warning restore VSTHRD002, DSB002
        });
        return services;
    }

    // The request's delayMs, which the action has validated before it resolves the settings.
    private static int? RequestedDelayMs(HttpContext? context) =>
        StrictBinding.TryParseWholeNumber(context?.Request.Query["delayMs"], out var delayMs) ? delayMs : null;
}

/// <summary>Settings of the tenant a request is for, loaded per request.</summary>
public sealed record TenantSettings(string Tenant);

/// <summary>A settings store that answers after a delay, with the asynchronous API a real store's client has.</summary>
public sealed class TenantSettingsStore
{
    public async Task<TenantSettings> LoadAsync(TimeSpan delay, CancellationToken cancellationToken = default)
    {
        await Task.Delay(delay, cancellationToken);
        return new TenantSettings("default");
    }
}

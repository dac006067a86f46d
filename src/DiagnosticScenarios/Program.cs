using DiagnosticScenarios.Hosting;
using DiagnosticScenarios.PoolHealth.Controls;
using DiagnosticScenarios.PoolHealth.Detection;
using DiagnosticScenarios.PoolHealth.LivePage;
using DiagnosticScenarios.PoolHealth.Metrics;
using DiagnosticScenarios.PoolHealth.StackCapture;
using DiagnosticScenarios.Scenarios.Blocking;
using DiagnosticScenarios.Scenarios.Catalogue;
using DiagnosticScenarios.Scenarios.Mock;
using DiagnosticScenarios.Scenarios.Sql;

// Started by its own stack capture to record it from outside (StackRecorder): no web server then.
if (StackRecorder.IsRecorder(args))
{
    Environment.ExitCode = StackRecorder.Run(args);
    return;
}

// Settings and the live page from the app's folder when it is started from another directory.
var builder = WebApplication.CreateBuilder(new WebApplicationOptions { Args = args, ContentRootPath = AppContentRoot.For(args) });

// ProblemDetails (RFC 9457) for every error the app answers (Kestrel answers what it refuses before the app, such as a
// 414 or 431, itself, without a body), AllowedHosts, the OpenAPI document.
builder.Services.AddWebDefaults();

// The mock database, Microsoft's diagnostics scenarios (deadlock, memleak, ...) and their concurrency limits.
builder.Services.AddScenarios(builder.Configuration);

// The catalogue of every scenario, as this app's options configure it (GET /api/scenarios, here and on the live page).
builder.Services.AddScenarioCatalogue(builder.Configuration);

// The SQL WAITFOR DELAY family over the configured database (Database:Provider, Embedded by default).
builder.Services.AddSqlScenarios(builder.Configuration);

// The blocking family: the primitives real services starve on, each beside its fix (and the slow upstream they call).
builder.Services.AddBlockingScenarios(builder.Configuration);

// Detection: the queue-delay probe, the injection listener, per-endpoint attribution, the meter, the starvation detector.
builder.Services.AddDetection(builder.Configuration);

// Metrics out: OpenTelemetry's SDK, scraped at the live page's /metrics, and OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set.
builder.Services.AddMetricsExport(builder.Configuration);

// The controls behind one gate: the SetMinThreads workaround, the load launch; the shutdown watchdog.
builder.Services.AddControls(builder.Configuration);

// The stack capture: who holds the pool threads, taken on the detector's starvation event or on request, off the pool.
builder.Services.AddStackCapture(builder.Configuration);

// The live page, served with its data on threads of the app's own (LivePage:Port, 5002).
builder.Services.AddLivePage(builder.Configuration);

var app = builder.Build();

app.UseWebDefaults();
app.UseLivePage();
app.UseControls();
app.UseScenarios();

app.MapApiDocumentation();
app.MapLivePage();
app.MapControls();
app.MapStackCapture();
app.MapScenarioCatalogue();

// Attribution times every routed request after this point; the scenarios themselves.
app.UseEndpointAttribution();
app.MapScenarios();

// To its end; an address another process holds ends it with a line saying so (AppRun).
Environment.ExitCode = app.RunToEnd();

using DiagnosticScenarios.Blocking;
using DiagnosticScenarios.Catalogue;
using DiagnosticScenarios.Controls;
using DiagnosticScenarios.Detection;
using DiagnosticScenarios.Infrastructure;
using DiagnosticScenarios.LivePage;
using DiagnosticScenarios.Scenarios;
using DiagnosticScenarios.Sql;
using DiagnosticScenarios.StackCapture;

var builder = WebApplication.CreateBuilder(args);

// Controllers with ProblemDetails (RFC 9457) for every 4xx/5xx, including model-binding errors.
builder.Services.AddScenarioControllers();

// The mock database and Microsoft's diagnostics scenarios (deadlock, memleak, ...).
builder.Services.AddScenarios(builder.Configuration);

// The SQL WAITFOR DELAY family over the configured database (Database:Provider, Embedded by default).
builder.Services.AddSqlScenarios(builder.Configuration);

// The blocking family: the primitives real services starve on, each beside its fix (and the slow upstream they call).
builder.Services.AddBlockingScenarios();

// Detection: the queue-delay probe, the injection listener, per-endpoint attribution, the DiagnosticScenarios meter.
builder.Services.AddDetection(builder.Configuration);

// The process controls: the SetMinThreads workaround and the load launch.
builder.Services.AddControls(builder.Configuration);

// The stack capture: who holds the pool threads, taken on starvation or on request, off the pool.
builder.Services.AddStackCapture(builder.Configuration);

// The gate in front of every control that changes the process (Controls:AllowRemoteClients opens it).
builder.Services.AddControlGate(builder.Configuration);

// Ctrl+C and SIGTERM end the process within the shutdown timeout, even when a starved pool cannot run the graceful stop.
builder.Services.AddHostedService<ShutdownWatchdog>();

// OpenAPI document at /openapi/v1.json; Swagger UI reads it at /swagger.
builder.Services.AddOpenApi();

var app = builder.Build();

// Unhandled exceptions and empty 4xx answers (unknown route, wrong method) become ProblemDetails.
app.UseExceptionHandler();
app.UseStatusCodePages();

// A query parameter given twice or empty, or a control character in the path or query, is a 400, never a silent misreading.
app.UseInputRules();

// At most Scenarios:ConcurrencyLimits of each destructive scenario at once; beyond, 429 with Retry-After.
app.UseRateLimiter();

app.MapOpenApi();
app.UseSwaggerUI(options => options.SwaggerEndpoint("/openapi/v1.json", "DiagnosticScenarios"));

// The live page at /, its read-only API at /api/threadpool, the controls beside it, the catalogue at /api/scenarios.
app.MapLivePage();
app.MapControls();
app.MapStackCapture();
app.MapScenarioCatalogue();

// Attribution times every routed request after this point; the scenarios themselves.
app.UseEndpointAttribution();
app.MapControllers();

app.Run();

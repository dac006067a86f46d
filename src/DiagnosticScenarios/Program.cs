using DiagnosticScenarios.Controls;
using DiagnosticScenarios.Infrastructure;
using DiagnosticScenarios.Scenarios;
using DiagnosticScenarios.Sql;
using DiagnosticScenarios.ThreadPoolHealth;

var builder = WebApplication.CreateBuilder(args);

// Controllers with ProblemDetails (RFC 9457) for every 4xx/5xx, including model-binding errors.
builder.Services.AddScenarioControllers();

// The mock database and Microsoft's diagnostics scenarios (deadlock, memleak, ...).
builder.Services.AddScenarios(builder.Configuration);

// The SQL WAITFOR DELAY family over the configured database (Database:Provider, Embedded by default).
builder.Services.AddSqlScenarios(builder.Configuration);

// The starvation detector, per-endpoint attribution, the DiagnosticScenarios meter and the page's load control.
builder.Services.AddThreadPoolHealth(builder.Configuration);

// The gate in front of every control that changes the process (Controls:AllowRemoteClients opens it), and a stop that a starved pool cannot hold up.
builder.Services.AddControlGate(builder.Configuration);

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

// The live page at / and the /api/threadpool API; attribution times every routed request after it.
app.MapThreadPoolHealth();
app.UseEndpointAttribution();

app.MapControllers();

app.Run();

using DiagnosticScenarios.Infrastructure;
using DiagnosticScenarios.Scenarios;
using DiagnosticScenarios.Sql;

var builder = WebApplication.CreateBuilder(args);

// Controllers with ProblemDetails (RFC 9457) for every 4xx/5xx, including model-binding errors.
builder.Services.AddScenarioControllers();

// The mock database and Microsoft's diagnostics scenarios (deadlock, memleak, ...).
builder.Services.AddScenarios(builder.Configuration);

// The SQL WAITFOR DELAY family over the configured database (Database:Provider, Embedded by default).
builder.Services.AddSqlScenarios(builder.Configuration);

// OpenAPI document at /openapi/v1.json; Swagger UI reads it at /swagger.
builder.Services.AddOpenApi();

var app = builder.Build();

// Unhandled exceptions and empty 4xx answers (unknown route, wrong method) become ProblemDetails.
app.UseExceptionHandler();
app.UseStatusCodePages();

app.MapOpenApi();
app.UseSwaggerUI(options => options.SwaggerEndpoint("/openapi/v1.json", "DiagnosticScenarios"));

app.MapControllers();

app.Run();

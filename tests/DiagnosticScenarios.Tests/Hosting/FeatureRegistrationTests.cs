using DiagnosticScenarios.Hosting;
using DiagnosticScenarios.Scenarios.Blocking;
using DiagnosticScenarios.Scenarios.Mock;
using DiagnosticScenarios.Scenarios.Sql;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Mvc;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;

namespace DiagnosticScenarios.Tests.Hosting;

/// <summary>
/// A scenario feature registers what its controllers need: on what every feature stands on (<c>AddWebDefaults</c>) and its
/// own <c>AddX()</c> alone, without the features <c>Program.cs</c> happens to register beside it, every controller of its
/// namespace can be made.
/// </summary>
public sealed class FeatureRegistrationTests
{
    private static readonly Dictionary<string, Action<IServiceCollection, IConfiguration>> Features = new(StringComparer.Ordinal)
    {
        [typeof(ScenarioRegistration).Namespace!] = (services, configuration) => services.AddScenarios(configuration),
        [typeof(SqlScenarioRegistration).Namespace!] = (services, configuration) => services.AddSqlScenarios(configuration),
        [typeof(BlockingRegistration).Namespace!] = (services, configuration) => services.AddBlockingScenarios(configuration),
    };

    public static TheoryData<string> FeatureNames => [.. Features.Keys];

    [Theory]
    [MemberData(nameof(FeatureNames))]
    public async Task ScenarioFeature_RegisteredAlone_MakesEveryControllerOfItsOwn(string feature)
    {
        var builder = WebApplication.CreateBuilder();
        builder.Services.AddWebDefaults();
        Features[feature](builder.Services, builder.Configuration);
        await using var app = builder.Build();

        var controllers = typeof(Program).Assembly.GetTypes()
            .Where(t => t.Namespace == feature && !t.IsAbstract && typeof(ControllerBase).IsAssignableFrom(t))
            .ToList();
        var unmade = new List<string>();
        foreach (var controller in controllers)
        {
            try
            {
                _ = ActivatorUtilities.CreateInstance(app.Services, controller);
            }
            catch (InvalidOperationException e)
            {
                unmade.Add($"{controller.Name}: {e.Message}");
            }
        }

        Assert.NotEmpty(controllers);
        Assert.True(unmade.Count == 0, string.Join('\n', unmade));
    }
}

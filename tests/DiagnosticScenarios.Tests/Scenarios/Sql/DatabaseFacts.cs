using System.Globalization;
using System.Runtime.CompilerServices;
using DiagnosticScenarios.Common;

namespace DiagnosticScenarios.Tests.Scenarios.Sql;

/// <summary>
/// A test that needs PostgreSQL: the one <c>POSTGRES_CONNECTION_STRING</c> names, or else a throwaway cluster the tests
/// start from the installed server binaries. With neither, a visible skip outside CI and a failure under <c>CI=true</c>.
/// </summary>
public sealed class PostgreSqlFactAttribute : FactAttribute
{
    public PostgreSqlFactAttribute([CallerMemberName] string test = "") =>
        Requirements.SkipUnless(this, PostgreSqlEnvironment.IsAvailable, PostgreSqlEnvironment.Install, test);
}

/// <summary>The data-driven twin of <see cref="PostgreSqlFactAttribute"/>.</summary>
public sealed class PostgreSqlTheoryAttribute : TheoryAttribute
{
    public PostgreSqlTheoryAttribute([CallerMemberName] string test = "") =>
        Requirements.SkipUnless(this, PostgreSqlEnvironment.IsAvailable, PostgreSqlEnvironment.Install, test);
}

/// <summary>A test against a real SQL Server; visibly skipped unless <c>SQLSERVER_CONNECTION_STRING</c> is set (also in CI).</summary>
public sealed class SqlServerFactAttribute : FactAttribute
{
    public SqlServerFactAttribute([CallerMemberName] string test = "")
    {
        if (string.IsNullOrEmpty(Environment.GetEnvironmentVariable("SQLSERVER_CONNECTION_STRING")))
        {
            Skip = "SQLSERVER_CONNECTION_STRING is not set: start one with scripts/sqlserver.sh (needs Docker)";
            DisplayName = $"{test} [skipped: {Skip}]";
        }
    }
}

internal static class PostgreSqlEnvironment
{
    public const string Install =
        "needs PostgreSQL: apt-get install postgresql (the tests then start a throwaway cluster), or set POSTGRES_CONNECTION_STRING (eval \"$(scripts/postgres.sh start)\")";

    private static readonly Lazy<string> Throwaway = new(StartThrowawayCluster);

    private static string? Configured =>
        Environment.GetEnvironmentVariable("POSTGRES_CONNECTION_STRING") is { Length: > 0 } value ? value : null;

    /// <summary>The newest <c>/usr/lib/postgresql/*/bin</c> with an <c>initdb</c>, as <c>scripts/postgres.sh</c> picks it.</summary>
    private static bool ServerInstalled =>
        Directory.Exists("/usr/lib/postgresql") &&
        Directory.EnumerateDirectories("/usr/lib/postgresql").Any(version => File.Exists(Path.Combine(version, "bin", "initdb")));

    public static bool IsAvailable => Configured is not null || ServerInstalled;

    /// <summary>The data directory of the throwaway cluster once started; null while the configured PostgreSQL is used.</summary>
    public static string? ThrowawayDataDirectory { get; private set; }

    /// <summary>The connection string, starting the throwaway cluster on first use when none is configured.</summary>
    public static string RequireConnectionString()
    {
        if (Configured is { } configured)
        {
            return configured;
        }

        if (!ServerInstalled)
        {
            throw new Xunit.Sdk.XunitException($"CI=true and no PostgreSQL: {Install}.");
        }

        return Throwaway.Value;
    }

    // scripts/postgres.sh does what a user does: a cluster in its own directory on a free port, the role and the database.
    private static string StartThrowawayCluster()
    {
        var dataDirectory = Path.Combine(Path.GetTempPath(), $"diagnosticscenarios-pg-{Guid.NewGuid():N}");
#pragma warning disable VSTHRD002 // deliberate: the cluster starts once, from xunit's synchronous check of the first test that needs it
        var exports = StartAsync(dataDirectory).GetAwaiter().GetResult();
#pragma warning restore VSTHRD002
        ThrowawayDataDirectory = dataDirectory;

        const string prefix = "export POSTGRES_CONNECTION_STRING='";
        var line = exports.Split('\n').Single(l => l.StartsWith(prefix, StringComparison.Ordinal));
        return line[prefix.Length..line.LastIndexOf('\'')];
    }

    private static async Task<string> StartAsync(string dataDirectory)
    {
        await RemoveWhenThisProcessEndsAsync(dataDirectory);
        return await PostgresScript.RunAsync("start", dataDirectory);
    }

    /// <summary>
    /// A watcher in a session of its own stops the cluster and deletes it once the test host is gone, however it ends
    /// (a hang timeout kills it without running any handler of its own).
    /// </summary>
    private static async Task RemoveWhenThisProcessEndsAsync(string dataDirectory)
    {
        const string watch = """
            exec </dev/null >/dev/null 2>&1
            while kill -0 "$1" 2>/dev/null; do sleep 1; done
            POSTGRES_DATA_DIR="$2" "$3" stop
            rm -rf "$2"
            """;
        // setsid -f returns once the watcher runs on its own.
        var setsid = await ChildProcess.RunAsync(
            new ChildProcessStart("setsid", ["-f", "bash", "-c", watch, "watch", Environment.ProcessId.ToString(CultureInfo.InvariantCulture), dataDirectory, PostgresScript.Path]),
            TimeSpan.FromSeconds(10));
        if (setsid.ExitCode != 0)
        {
            throw new InvalidOperationException($"Could not start the throwaway cluster's watcher: {setsid}");
        }
    }
}

/// <summary>Runs <c>scripts/postgres.sh</c> from the repository on the cluster the tests use, bounded in time.</summary>
internal static class PostgresScript
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(90);

    public static string Path { get; } = System.IO.Path.Combine(RepositoryPaths.Root, "scripts", "postgres.sh");

    public static Task RunAsync(string verb) => RunAsync(verb, PostgreSqlEnvironment.ThrowawayDataDirectory);

    /// <summary>Runs a verb and returns its standard output; <paramref name="dataDirectory"/> null is the script's default cluster.</summary>
    public static async Task<string> RunAsync(string verb, string? dataDirectory)
    {
        var environment = new Dictionary<string, string?>();
        if (dataDirectory is not null)
        {
            environment["POSTGRES_DATA_DIR"] = dataDirectory;
        }

        var result = await ChildProcess.RunAsync(new ChildProcessStart(Path, [verb]) { Environment = environment }, Timeout);
        return result.ExitCode == 0 ? result.Output : throw new InvalidOperationException(result.ToString());
    }
}

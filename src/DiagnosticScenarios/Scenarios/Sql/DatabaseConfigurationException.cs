namespace DiagnosticScenarios.Scenarios.Sql;

/// <summary>The configured database cannot even be tried: a connection string is missing or does not parse.</summary>
public sealed class DatabaseConfigurationException : Exception
{
    public DatabaseConfigurationException()
    {
    }

    public DatabaseConfigurationException(string message)
        : base(message)
    {
    }

    public DatabaseConfigurationException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}

namespace DiagnosticScenarios.Infrastructure;

/// <summary>What a failed dependency's 503 says: the exception and the ones inside it, each message once.</summary>
public static class ExceptionCauses
{
    /// <summary>
    /// The messages from the outermost exception in, joined by colons, each once: a driver's own message often names only
    /// the address, and the socket's reason ("Connection refused") is the innermost.
    /// </summary>
    public static string Describe(Exception error)
    {
        ArgumentNullException.ThrowIfNull(error);
        var messages = new List<string>();
        for (var e = error; e is not null; e = e.InnerException)
        {
            if (!messages.Any(m => m.Contains(e.Message, StringComparison.Ordinal)))
            {
                messages.Add(e.Message.TrimEnd('.'));
            }
        }

        return string.Join(": ", messages) + ".";
    }
}

namespace DiagnosticScenarios.LoadRunner.Server;

/// <summary>The last lines a process wrote, bounded, for error messages.</summary>
internal sealed class OutputTail(int maxLines)
{
    private readonly Queue<string> _lines = new();

    public void Add(string? line)
    {
        if (line is null)
        {
            return;
        }

        lock (_lines)
        {
            _lines.Enqueue(line);
            if (_lines.Count > maxLines)
            {
                _lines.Dequeue();
            }
        }
    }

    public override string ToString()
    {
        lock (_lines)
        {
            return string.Join('\n', _lines);
        }
    }
}

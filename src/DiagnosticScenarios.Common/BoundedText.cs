using System.Text;

namespace DiagnosticScenarios.Common;

/// <summary>The last lines of a stream, at most a number of characters in all; thread-safe.</summary>
internal sealed class BoundedText(int maxChars)
{
    private readonly Queue<string> _lines = new();
    private readonly Lock _lock = new();
    private int _chars;
    private long _dropped;

    public void AppendLine(string line)
    {
        lock (_lock)
        {
            _lines.Enqueue(line);
            _chars += line.Length + 1;
            while (_chars > maxChars && _lines.Count > 1)
            {
                var oldest = _lines.Dequeue();
                _chars -= oldest.Length + 1;
                _dropped += oldest.Length + 1;
            }
        }
    }

    public override string ToString()
    {
        lock (_lock)
        {
            var text = new StringBuilder(_chars + 64);
            if (_dropped > 0)
            {
                text.Append("… ").Append(_dropped).AppendLine(" earlier characters dropped …");
            }

            foreach (var line in _lines)
            {
                text.AppendLine(line);
            }

            return text.ToString();
        }
    }
}

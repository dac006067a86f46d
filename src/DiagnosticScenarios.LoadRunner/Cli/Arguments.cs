using System.Globalization;

namespace DiagnosticScenarios.LoadRunner.Cli;

/// <summary>Options as <c>--name value</c> pairs and bare flags; anything left unread is a usage error.</summary>
internal sealed class Arguments
{
    private readonly List<(string Name, string? Value)> _items = [];
    private readonly HashSet<int> _used = [];

    public Arguments(string[] args)
    {
        for (var i = 0; i < args.Length; i++)
        {
            if (!args[i].StartsWith('-'))
            {
                throw new UsageException($"Unexpected argument '{args[i]}'.");
            }

            var hasValue = i + 1 < args.Length && !IsOptionName(args[i + 1]);
            _items.Add((args[i], hasValue ? args[++i] : null));
        }
    }

    public string? Value(params string[] names)
    {
        var values = Values(names);
        return values.Count == 0 ? null : values[^1];
    }

    public IReadOnlyList<string> Values(params string[] names)
    {
        var found = new List<string>();
        for (var i = 0; i < _items.Count; i++)
        {
            if (names.Contains(_items[i].Name, StringComparer.Ordinal))
            {
                _used.Add(i);
                found.Add(_items[i].Value ?? throw new UsageException($"{_items[i].Name} needs a value."));
            }
        }

        return found;
    }

    public bool Flag(string name)
    {
        var index = _items.FindIndex(item => item.Name == name);
        if (index < 0)
        {
            return false;
        }

        if (_items[index].Value is not null)
        {
            throw new UsageException($"{name} takes no value.");
        }

        _used.Add(index);
        return true;
    }

    public int? Int(params string[] names) => Value(names) is { } v
        ? int.TryParse(v, NumberStyles.Integer, CultureInfo.InvariantCulture, out var n) && n > 0 ? n : throw new UsageException($"{names[^1]} takes a positive whole number, not '{v}'.")
        : null;

    public double? Double(params string[] names) => Value(names) is { } v
        ? double.TryParse(v, NumberStyles.Float, CultureInfo.InvariantCulture, out var n) && n > 0 ? n : throw new UsageException($"{names[^1]} takes a positive number, not '{v}'.")
        : null;

    public TimeSpan? Duration(params string[] names) => Value(names) is { } v ? ParseDuration(v) : null;

    public void ThrowIfUnused()
    {
        var unused = Enumerable.Range(0, _items.Count).Where(i => !_used.Contains(i)).Select(i => _items[i].Name).ToList();
        if (unused.Count > 0)
        {
            throw new UsageException($"Unknown option(s): {string.Join(", ", unused)}.");
        }
    }

    internal static TimeSpan ParseDuration(string text)
    {
        var (number, scale) = text switch
        {
            _ when text.EndsWith("ms", StringComparison.OrdinalIgnoreCase) => (text[..^2], 0.001),
            _ when text.EndsWith('s') || text.EndsWith('S') => (text[..^1], 1.0),
            _ when text.EndsWith('m') || text.EndsWith('M') => (text[..^1], 60.0),
            _ when text.EndsWith('h') || text.EndsWith('H') => (text[..^1], 3600.0),
            _ => (text, 1.0),
        };
        return double.TryParse(number, NumberStyles.Float, CultureInfo.InvariantCulture, out var value) && value > 0
            ? TimeSpan.FromSeconds(value * scale)
            : throw new UsageException($"Not a duration: '{text}' (e.g. 500ms, 10s, 2m).");
    }

    // Negative numbers are not option names; nothing here takes one, but "-1" should read as a bad value, not a flag.
    private static bool IsOptionName(string arg) => arg.StartsWith('-') && arg.Length > 1 && !char.IsDigit(arg[1]);
}

/// <summary>The command line is wrong; the message says how.</summary>
internal sealed class UsageException(string message) : Exception(message);

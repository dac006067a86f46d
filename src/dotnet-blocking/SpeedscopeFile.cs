using System.Text.Json;
using DiagnosticScenarios.BlockingAnalysis;

namespace DotnetBlocking;

/// <summary>
/// A snapshot in speedscope's file format (https://www.speedscope.app/file-format-schema.json): "sampled" profiles whose
/// samples are stacks of indexes into shared frames, root first, weighted by threads. The first profile holds every
/// group, one sample each, for the flame graph of the whole process; then one profile per group. App frames carry their file and line.
/// </summary>
internal static class SpeedscopeFile
{
    public const string Schema = "https://www.speedscope.app/file-format-schema.json";

    public static void Write(Stream output, StackSnapshot snapshot, IReadOnlyList<ThreadGroup> groups)
    {
        var frames = new List<(string Name, string? File, int? Line)>();
        var index = new Dictionary<(string Name, string? File, int? Line), int>();
        var stacks = groups.Select(g => Stack(g, frames, index)).ToList();

        using var json = new Utf8JsonWriter(output, new JsonWriterOptions { Indented = false });
        json.WriteStartObject();
        json.WriteString("$schema", Schema);
        json.WriteString("name", $"{snapshot.Source ?? $"Process {snapshot.ProcessId}"}: {snapshot.ThreadCount} managed threads at {snapshot.CapturedAt:O}");
        json.WriteString("exporter", "dotnet-blocking");
        json.WriteNumber("activeProfileIndex", 0);
        json.WriteStartObject("shared");
        json.WriteStartArray("frames");
        foreach (var (name, file, line) in frames)
        {
            json.WriteStartObject();
            json.WriteString("name", name);
            if (file is not null)
            {
                json.WriteString("file", file);
                json.WriteNumber("line", line!.Value);
            }

            json.WriteEndObject();
        }

        json.WriteEndArray();
        json.WriteEndObject();
        json.WriteStartArray("profiles");
        Profile(json, $"All {groups.Sum(g => g.Threads)} threads shown", stacks, groups.Select(g => g.Threads).ToList());
        for (var i = 0; i < groups.Count; i++)
        {
            Profile(json, groups[i].Describe(snapshot.PoolThreadCount), [stacks[i]], [groups[i].Threads]);
        }

        json.WriteEndArray();
        json.WriteEndObject();
    }

    // Root first, as speedscope reads a sample; the app's frames named with their line.
    private static List<int> Stack(ThreadGroup group, List<(string, string?, int?)> frames, Dictionary<(string, string?, int?), int> index)
    {
        // The app's frames, innermost run then the outer ones, matched to the stack's frames in order, leaf first.
        var appFrames = new AppFrame?[group.Frames.Count];
        var next = 0;
        AppFrame[] app = [.. group.AppFrames, .. group.OuterAppFrames];
        for (var i = 0; i < group.Frames.Count && next < app.Length; i++)
        {
            if (FrameNames.TypeAndMethod(group.Frames[i]) == app[next].Method)
            {
                appFrames[i] = app[next++];
            }
        }

        var stack = new List<int>(group.Frames.Count);
        for (var i = group.Frames.Count - 1; i >= 0; i--)
        {
            var appFrame = appFrames[i];
            var key = (group.Frames[i], appFrame?.Source?.File, appFrame?.Source?.Line);
            if (!index.TryGetValue(key, out var position))
            {
                position = frames.Count;
                frames.Add(key);
                index[key] = position;
            }

            stack.Add(position);
        }

        return stack;
    }

    private static void Profile(Utf8JsonWriter json, string name, IReadOnlyList<List<int>> samples, IReadOnlyList<int> weights)
    {
        json.WriteStartObject();
        json.WriteString("type", "sampled");
        json.WriteString("name", name);
        json.WriteString("unit", "none");
        json.WriteNumber("startValue", 0);
        json.WriteNumber("endValue", weights.Sum());
        json.WriteStartArray("samples");
        foreach (var sample in samples)
        {
            json.WriteStartArray();
            foreach (var frame in sample)
            {
                json.WriteNumberValue(frame);
            }

            json.WriteEndArray();
        }

        json.WriteEndArray();
        json.WriteStartArray("weights");
        foreach (var weight in weights)
        {
            json.WriteNumberValue(weight);
        }

        json.WriteEndArray();
        json.WriteEndObject();
    }
}

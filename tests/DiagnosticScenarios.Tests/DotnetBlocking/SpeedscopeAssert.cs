using System.Text.Json;

namespace DiagnosticScenarios.Tests.DotnetBlocking;

/// <summary>What speedscope's file format (https://www.speedscope.app/file-format-schema.json) asks of a file of sampled profiles.</summary>
internal static class SpeedscopeAssert
{
    public static void WellFormed(string path)
    {
        using var json = JsonDocument.Parse(File.ReadAllText(path));
        var root = json.RootElement;
        Assert.Equal("https://www.speedscope.app/file-format-schema.json", root.GetProperty("$schema").GetString());
        var frames = root.GetProperty("shared").GetProperty("frames");
        Assert.True(frames.GetArrayLength() > 0, "no frames");
        Assert.All(frames.EnumerateArray(), f => Assert.False(string.IsNullOrEmpty(f.GetProperty("name").GetString())));
        var profiles = root.GetProperty("profiles");
        Assert.True(profiles.GetArrayLength() > 0, "no profiles");
        Assert.InRange(root.GetProperty("activeProfileIndex").GetInt32(), 0, profiles.GetArrayLength() - 1);
        foreach (var profile in profiles.EnumerateArray())
        {
            Assert.Equal("sampled", profile.GetProperty("type").GetString());
            Assert.Equal("none", profile.GetProperty("unit").GetString());
            var samples = profile.GetProperty("samples");
            var weights = profile.GetProperty("weights");
            Assert.Equal(samples.GetArrayLength(), weights.GetArrayLength());
            Assert.All(samples.EnumerateArray(), sample =>
            {
                Assert.True(sample.GetArrayLength() > 0, "an empty stack");
                Assert.All(sample.EnumerateArray(), frame => Assert.InRange(frame.GetInt32(), 0, frames.GetArrayLength() - 1));
            });
            var total = weights.EnumerateArray().Sum(w => w.GetDouble());
            Assert.Equal(profile.GetProperty("endValue").GetDouble() - profile.GetProperty("startValue").GetDouble(), total);
        }
    }
}

using System.Text.RegularExpressions;

namespace DiagnosticScenarios.Tests.Docs;

/// <summary>
/// Every test class the documents name (<c>`StarvationLoadTests`</c>) is a class of this test project now: a class renamed,
/// split or removed fails here until the page that sends a reader to it says where its tests went.
/// </summary>
public sealed partial class DocumentedTestClassesTests
{
    private static readonly HashSet<string> Classes = [.. typeof(DocumentedTestClassesTests).Assembly.GetTypes().Select(t => t.Name)];

    public static TheoryData<string, string> Mentions()
    {
        var documents = new[] { Path.Combine(RepositoryPaths.Root, "README.md") }
            .Concat(Directory.EnumerateFiles(Path.Combine(RepositoryPaths.Root, "docs"), "*.md", SearchOption.AllDirectories));
        var data = new TheoryData<string, string>();
        foreach (var document in documents)
        {
            var lines = File.ReadAllLines(document);
            for (var i = 0; i < lines.Length; i++)
            {
                foreach (var name in TestClass().Matches(lines[i]).Select(m => m.Groups["name"].Value).Distinct(StringComparer.Ordinal))
                {
                    data.Add($"{Path.GetRelativePath(RepositoryPaths.Root, document)}:{i + 1}", name);
                }
            }
        }

        return data;
    }

    [Fact]
    public void TheDocumentsNameTestClasses()
    {
        // Without this the theory below could pass by finding nothing to check.
        Assert.True(Mentions().Count() >= 20, $"only {Mentions().Count()} test classes named");
    }

    [Theory]
    [MemberData(nameof(Mentions))]
    public void NamedTestClass_IsAClassOfTheTestProject(string where, string name) =>
        Assert.True(Classes.Contains(name), $"{where} names `{name}`, which is no class of the test project");

    [GeneratedRegex("`(?<name>[A-Z][A-Za-z0-9]*Tests)`")]
    private static partial Regex TestClass();
}

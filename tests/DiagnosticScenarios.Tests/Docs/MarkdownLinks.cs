using System.Globalization;
using System.Text;
using System.Text.RegularExpressions;

namespace DiagnosticScenarios.Tests.Docs;

/// <summary>A link of a Markdown file: the line it is on and its target as written (<c>docs/sql.md#providers</c>).</summary>
internal sealed record MarkdownLink(int Line, string Target);

/// <summary>
/// What a Markdown file links to and which anchors its headings make, read as GitHub renders it: nothing inside a fenced
/// code block or a code span is a link or a heading.
/// </summary>
internal static partial class MarkdownLinks
{
    /// <summary>Inline links and images, <c>[text](target)</c> and <c>![alt](target "title")</c>, and reference definitions.</summary>
    public static IReadOnlyList<MarkdownLink> Links(string markdown)
    {
        var links = new List<MarkdownLink>();
        foreach (var (line, text) in Prose(markdown))
        {
            var withoutCode = CodeSpan().Replace(text, string.Empty);
            links.AddRange(InlineLink().Matches(withoutCode).Select(m => new MarkdownLink(line, m.Groups["target"].Value)));
            links.AddRange(ReferenceDefinition().Matches(withoutCode).Select(m => new MarkdownLink(line, m.Groups["target"].Value)));
        }

        return links;
    }

    /// <summary>The anchors of the file's headings, in order, as GitHub makes them: a repeated one gets -1, -2, ….</summary>
    public static IReadOnlyList<string> Anchors(string markdown)
    {
        var seen = new Dictionary<string, int>(StringComparer.Ordinal);
        var anchors = new List<string>();
        foreach (var (_, text) in Prose(markdown))
        {
            var heading = Heading().Match(text);
            if (!heading.Success)
            {
                continue;
            }

            var slug = Slug(heading.Groups["text"].Value);
            var count = seen.GetValueOrDefault(slug);
            anchors.Add(count == 0 ? slug : $"{slug}-{count}");
            seen[slug] = count + 1;
        }

        return anchors;
    }

    /// <summary>
    /// GitHub's anchor for a heading's text: its rendered text (a link's text, a code span's content) in lower case, every
    /// character but letters, digits, '-', '_' and spaces dropped, each space a '-'.
    /// </summary>
    public static string Slug(string heading)
    {
        var rendered = InlineLink().Replace(heading, m => m.Groups["text"].Value).Replace("`", string.Empty, StringComparison.Ordinal);
        var slug = new StringBuilder();
        foreach (var c in rendered.Trim().ToLowerInvariant())
        {
            var category = char.GetUnicodeCategory(c);
            if (char.IsLetterOrDigit(c) || c is '-' or '_' || category is UnicodeCategory.NonSpacingMark or UnicodeCategory.SpacingCombiningMark)
            {
                slug.Append(c);
            }
            else if (c == ' ')
            {
                slug.Append('-');
            }
        }

        return slug.ToString();
    }

    // The file's lines outside fenced code blocks, numbered from 1.
    private static IEnumerable<(int Line, string Text)> Prose(string markdown)
    {
        string? fence = null;
        var lines = markdown.Replace("\r\n", "\n", StringComparison.Ordinal).Split('\n');
        for (var i = 0; i < lines.Length; i++)
        {
            var opening = Fence().Match(lines[i]);
            if (fence is null && opening.Success)
            {
                fence = opening.Groups["fence"].Value;
            }
            else if (fence is not null && lines[i].TrimStart().StartsWith(fence, StringComparison.Ordinal) && lines[i].Trim().Trim(fence[0]).Length == 0)
            {
                fence = null;
            }
            else if (fence is null)
            {
                yield return (i + 1, lines[i]);
            }
        }
    }

    [GeneratedRegex(@"^\s{0,3}(?<fence>`{3,}|~{3,})")]
    private static partial Regex Fence();

    [GeneratedRegex(@"^\s{0,3}#{1,6}\s+(?<text>.*?)(\s+#+)?\s*$")]
    private static partial Regex Heading();

    [GeneratedRegex(@"(?<ticks>`+).+?\k<ticks>")]
    private static partial Regex CodeSpan();

    // [text](target) or ![alt](<target> "title"); the text may hold one level of brackets, as a badge's image does.
    [GeneratedRegex(@"!?\[(?<text>(?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*<?(?<target>[^)\s>]*)>?(?:\s+""[^""]*"")?\s*\)")]
    private static partial Regex InlineLink();

    [GeneratedRegex(@"^\s{0,3}\[[^\]]+\]:\s*<?(?<target>[^\s>]+)>?")]
    private static partial Regex ReferenceDefinition();
}

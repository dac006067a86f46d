using System.CommandLine;
using System.CommandLine.Parsing;
using System.Globalization;
using System.Text.Json;
using DiagnosticScenarios.Common;
using DiagnosticScenarios.Common.CommandLines;
using DiagnosticScenarios.LoadRunner.Compare;
using DiagnosticScenarios.LoadRunner.Load;

namespace DiagnosticScenarios.LoadRunner.Cli;

/// <summary><c>run</c>: loads one URL, closed loop (<c>-c</c> clients back to back) or open loop (<c>--rate</c>), and reports.</summary>
public sealed class RunCommand(TextWriter output, TextWriter error)
{
    private readonly Option<Uri> _url = new("--url") { Description = "The absolute URL to load.", Required = true, CustomParser = AbsoluteUrl };
    private readonly Option<int> _connections = SharedOptions.Connections();
    private readonly Option<TimeSpan?> _duration = new("--duration", "-d") { Description = $"How long to load ({Durations.Help}); default {LoadOptions.DefaultDuration.TotalSeconds:0}s unless -n is given.", CustomParser = SharedOptions.PositiveDuration };
    private readonly Option<int?> _requests = new("--requests", "-n") { Description = "Requests in total, instead of a duration.", CustomParser = r => OptionValues.WholeNumber(r, 1, int.MaxValue) };
    private readonly Option<double?> _rate = new("--rate") { Description = "Open loop: requests per second at fixed times, latency counted from the intended send.", CustomParser = OptionValues.PositiveNumber };
    private readonly Option<TimeSpan> _timeout = SharedOptions.Timeout();
    private readonly Option<TimeSpan?> _thinkTime = SharedOptions.ThinkTime();
    private readonly Option<bool> _noDrain = new("--no-drain") { Description = "Do not wait for the requests in flight when the time is up." };
    private readonly Option<HttpMethod> _method = new("--method", "-m") { Description = "The request method.", CustomParser = Method, DefaultValueFactory = _ => HttpMethod.Get };
    private readonly Option<int?> _bodyBytes = new("--body-bytes") { Description = "Each request carries a body of this many bytes.", CustomParser = r => OptionValues.WholeNumber(r, 0, 64 * 1024 * 1024) };
    private readonly Option<TimeSpan?> _uploadOver = new("--upload-over") { Description = $"Send each body in pieces spread over this long, a slow client's upload ({Durations.Help}); needs --body-bytes.", CustomParser = SharedOptions.PositiveDuration };
    private readonly Option<bool> _json = new("--json") { Description = "Write the report as JSON." };

    public Command Create()
    {
        var command = new Command("run", "Closed loop: -c clients send back to back for -d (or -n requests in total); open loop with --rate.")
        {
            _url, _connections, _duration, _requests, _rate, _thinkTime, _timeout, _noDrain, _method, _bodyBytes, _uploadOver, _json,
        };
        command.Validators.Add(RefuseMismatchedOptions);
        command.SetAction(RunAsync);
        return command;
    }

    /// <summary>
    /// What to say when no request got an answer and every one failed before it had a chance to (refused, unreachable):
    /// a measurement of nothing, where a run whose requests all timed out has measured a starved server.
    /// </summary>
    public static string? NothingListened(LoadReport report)
    {
        ArgumentNullException.ThrowIfNull(report);
        if (report.Completed > 0 || report.Timeouts > 0 || report.Unfinished > 0 || report.Errors.Count == 0)
        {
            return null;
        }

        var errors = string.Join(", ", report.Errors.Select(e => $"{e.Key} × {e.Value}"));
        // Refused or unknown: nothing listens there. Anything else (a TLS handshake that failed, say) reached something.
        var nobody = report.Errors.Keys.All(e => e is nameof(HttpRequestError.ConnectionError) or nameof(HttpRequestError.NameResolutionError));
        return $"Nothing answered at {report.Url}: every request failed before an answer ({errors})."
            + (nobody ? " Is the app listening there? Start it, or give --url the address it listens on." : "");
    }

    // Whether each was given, not its value: a value that did not parse has its own error already, and reading it here
    // would throw.
    private void RefuseMismatchedOptions(CommandResult parse)
    {
        if (parse.GetResult(_uploadOver) is not null && parse.GetResult(_bodyBytes) is null)
        {
            parse.AddError("--upload-over needs --body-bytes: a slow upload needs a body.");
        }

        if (parse.GetResult(_rate) is not null && parse.GetResult(_thinkTime) is not null)
        {
            parse.AddError("--think-time is the closed loop's; the open loop (--rate) sends at fixed times.");
        }
    }

    private async Task<int> RunAsync(ParseResult parse, CancellationToken cancellationToken)
    {
        var options = Options(parse);

        // A progress line only for runs long enough to wonder about, on stderr so --json stays clean.
        var showProgress = (options.Requests is null && (options.Duration ?? LoadOptions.DefaultDuration) > TimeSpan.FromSeconds(3)) || options.Requests > 2000;
        var progress = showProgress ? new Progress<LoadProgress>(p => error.Write(string.Create(CultureInfo.InvariantCulture,
            $"\r{p.Elapsed.TotalSeconds,5:0}s  sent {p.Sent}  answered {p.Completed}  failed {p.Failures}  in flight {p.InFlight}  {p.RequestsPerSecondLastInterval:0.0} req/s   "))) : null;

        var report = await LoadGenerator.RunAsync(options, progress, cancellationToken);
        if (showProgress)
        {
            await error.WriteLineAsync();
        }

        await output.WriteAsync(parse.GetValue(_json) ? JsonSerializer.Serialize(report, CompareJson.Options) + Environment.NewLine : RunSummary.Render(report));
        if (NothingListened(report) is { } nobody)
        {
            await error.WriteLineAsync(nobody);
            return ExitCodes.Failed;
        }

        return ExitCodes.Done;
    }

    private LoadOptions Options(ParseResult parse) => new()
    {
        Url = parse.GetRequiredValue(_url),
        Connections = parse.GetValue(_connections),
        Duration = parse.GetValue(_duration),
        Requests = parse.GetValue(_requests),
        Rate = parse.GetValue(_rate),
        ThinkTime = parse.GetValue(_thinkTime),
        Timeout = parse.GetValue(_timeout),
        Drain = parse.GetValue(_noDrain) ? TimeSpan.Zero : null,
        Method = parse.GetValue(_method)!,
        BodyBytes = parse.GetValue(_bodyBytes),
        UploadOver = parse.GetValue(_uploadOver),
    };

    private static HttpMethod? Method(ArgumentResult result)
    {
        var text = OptionValues.Text(result);
        if (text.Length > 0 && text.All(char.IsAsciiLetter))
        {
            return new HttpMethod(text.ToUpperInvariant());
        }

        result.AddError($"{OptionValues.OptionName(result)} takes a method such as GET or POST, not '{text}'.");
        return null;
    }

    private static Uri? AbsoluteUrl(ArgumentResult result)
    {
        var text = OptionValues.Text(result);
        if (Uri.TryCreate(text, UriKind.Absolute, out var uri) && uri.Scheme is "http" or "https")
        {
            return uri;
        }

        result.AddError($"Not an absolute http(s) URL: '{text}'.");
        return null;
    }
}

using System.Globalization;

namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>
/// The durations only Prometheus has, for <see cref="StarvationRulePrometheus.ToPrometheusRules"/>. The rule's own figures
/// (its window, the queue's length and seconds of work, the CPU) come from <see cref="StarvationRule"/>.
/// </summary>
/// <param name="ScrapeInterval">
/// How often Prometheus scrapes the app and evaluates the rules (the group's <c>interval</c>). The rule's window is its
/// number of samples at this interval: at one second, the rule's own seconds.
/// </param>
/// <param name="RateWindow">The range of <c>rate()</c> for completed work items and CPU time: at least two scrapes.</param>
/// <param name="For">
/// How long the rule must keep holding before the alert fires (the alert's <c>for:</c>). Three seconds, the rule's own
/// window again: under taskwait at 125 connections on two processors the pool's compensation drains the queue for a
/// sample every few seconds from about ten seconds in, which ends the rule's streak; five seconds would need eight
/// unbroken samples, which such a load does not always give.
/// </param>
public sealed record PrometheusRuleDurations(TimeSpan ScrapeInterval, TimeSpan RateWindow, TimeSpan For)
{
    /// <summary>What <c>monitoring/alerts.yml</c> ships, for a scrape a second (the workshop's, and the live alert test's).</summary>
    public static PrometheusRuleDurations Shipped { get; } = new(
        ScrapeInterval: TimeSpan.FromSeconds(1),
        RateWindow: TimeSpan.FromSeconds(5),
        For: TimeSpan.FromSeconds(StarvationRule.Default.WindowSeconds));

    /// <summary>
    /// What <c>monitoring/alerts-15s.yml</c> ships, for Prometheus's usual production scrape of 15 s: the window's three
    /// samples span 30 s, <c>rate()</c> reads four scrapes, and the verdict must hold for two more evaluations. The rules
    /// for a scrape a second never fire at 15 s (their windows hold one sample), so a production Prometheus loads this one.
    /// </summary>
    public static PrometheusRuleDurations FifteenSecondScrape { get; } = new(
        ScrapeInterval: TimeSpan.FromSeconds(15),
        RateWindow: TimeSpan.FromSeconds(60),
        For: TimeSpan.FromSeconds(30));
}

/// <summary>
/// <see cref="StarvationRule"/> as Prometheus recording and alerting rules, over the runtime's <c>System.Runtime</c> meter as
/// OpenTelemetry's Prometheus exporters name it. The rule's conditions over the window's samples, as the app's detector
/// decides them each second: a queue that never empties (<c>min_over_time</c>), its mean length (<c>avg_over_time</c>), its mean length over the mean rate of
/// completions (the seconds a queued item waits), the CPU at every sample (<c>max_over_time</c>); Prometheus then asks the
/// verdict to hold for <see cref="PrometheusRuleDurations.For"/>.
/// </summary>
public static class StarvationRulePrometheus
{
    public const string AlertName = "ThreadPoolStarvation";
    public const string GroupName = "dotnet-thread-pool-starvation";

    // System.Runtime's instruments as OpenTelemetry's Prometheus exporters name them. The runtime declares the pool's
    // thread count and queue length as observable counters, hence their _total: read as gauges here, which they are.
    public const string ThreadCount = "dotnet_thread_pool_thread_count_total";
    public const string QueueLength = "dotnet_thread_pool_queue_length_total";
    public const string CompletedWorkItems = "dotnet_thread_pool_work_item_count_total";
    public const string CpuTime = "dotnet_process_cpu_time_seconds_total";
    public const string CpuCount = "dotnet_process_cpu_count";

    /// <summary>Recorded: work items the pool completes a second.</summary>
    public const string CompletedPerSecond = "dotnet_thread_pool:completed_per_second";

    /// <summary>Recorded: how many seconds of work the queue holds over the rule's window at the rate the pool completes it.</summary>
    public const string QueuedSecondsOfWork = "dotnet_thread_pool:queued_seconds_of_work";

    /// <summary>Recorded: the process's CPU as a share of all its processors, in percent.</summary>
    public const string CpuPercent = "dotnet_process:cpu_percent";

    /// <summary>The metric names the rules read from the scrape.</summary>
    public static IReadOnlyList<string> InputMetrics { get; } = [QueueLength, CompletedWorkItems, CpuTime, CpuCount];

    /// <summary>The rules file: one group, evaluated at the scrape interval.</summary>
    public static string ToPrometheusRules(this StarvationRule rule, PrometheusRuleDurations durations)
    {
        ArgumentNullException.ThrowIfNull(rule);
        ArgumentNullException.ThrowIfNull(durations);
        if (durations.RateWindow < 2 * durations.ScrapeInterval)
        {
            throw new ArgumentOutOfRangeException(nameof(durations), durations.RateWindow, "rate() needs at least two scrapes in its window.");
        }

        // The window's samples: its last at the evaluation, its first WindowSeconds - 1 scrapes before; half a scrape more
        // takes in a sample scraped a little late and never one more.
        var window = Duration(durations.ScrapeInterval * (rule.WindowSeconds - 1) + durations.ScrapeInterval / 2);
        var rate = Duration(durations.RateWindow);

        return string.Create(CultureInfo.InvariantCulture, $$$"""
            # Thread-pool starvation, as src/DiagnosticScenarios.BlockingAnalysis/StarvationRule.cs decides it; generated by
            # StarvationRule.ToPrometheusRules: change the rule or its durations (PrometheusRuleDurations), never this file.
            # For a scrape and evaluation interval of {{{Duration(durations.ScrapeInterval)}}}: the rule's window is {{{rule.WindowSeconds}}} samples ({{{window}}} covers them).
            groups:
              - name: {{{GroupName}}}
                interval: {{{Duration(durations.ScrapeInterval)}}}
                rules:
                  - record: {{{CompletedPerSecond}}}
                    expr: rate({{{CompletedWorkItems}}}[{{{rate}}}])
                  - record: {{{QueuedSecondsOfWork}}}
                    expr: avg_over_time({{{QueueLength}}}[{{{window}}}]) / avg_over_time({{{CompletedPerSecond}}}[{{{window}}}])
                  - record: {{{CpuPercent}}}
                    expr: 100 * sum without (cpu_mode) (rate({{{CpuTime}}}[{{{rate}}}])) / {{{CpuCount}}}
                  - alert: {{{AlertName}}}
                    expr: >-
                      {{{QueuedSecondsOfWork}}} >= {{{rule.MinQueuedSecondsOfWork}}}
                      and min_over_time({{{QueueLength}}}[{{{window}}}]) > 0
                      and avg_over_time({{{QueueLength}}}[{{{window}}}]) >= {{{rule.MinQueueLength}}}
                      and max_over_time({{{CpuPercent}}}[{{{window}}}]) < {{{rule.MaxCpuPercent}}}
                    for: {{{Duration(durations.For)}}}
                    labels:
                      severity: warning
                    annotations:
                      summary: Thread-pool starvation in {{ $labels.instance }}
                      description: >-
                        Over {{{rule.WindowSeconds}}} samples the pool's queue never emptied, held at least {{{rule.MinQueueLength}}} work items on average, and a queued item
                        waited at least {{{rule.MinQueuedSecondsOfWork}}} s for a thread ({{ $value }} s now, at the rate the pool completes work),
                        while the process's CPU stayed under {{{rule.MaxCpuPercent}}} %: threads are waiting, not working (blocking calls such
                        as .Result, .Wait(), a lock or synchronous I/O on pool threads). Take a stack snapshot to name the blocking call.

            """);
    }

    // Prometheus's duration syntax: whole seconds as "5s", anything finer in milliseconds.
    private static string Duration(TimeSpan duration) =>
        duration.Ticks % TimeSpan.TicksPerSecond == 0
            ? string.Create(CultureInfo.InvariantCulture, $"{(long)duration.TotalSeconds}s")
            : string.Create(CultureInfo.InvariantCulture, $"{(long)duration.TotalMilliseconds}ms");
}

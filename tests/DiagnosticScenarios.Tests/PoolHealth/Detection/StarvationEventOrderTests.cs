using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.PoolHealth.Detection;
using Microsoft.Extensions.DependencyInjection;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.PoolHealth.Detection;

/// <summary>
/// The detector's order within a second: the starvation event reaches its listeners (the log line, the stack capture)
/// before the sample that declared it is published. Whoever acts on a starved sample (the page's Capture now, a monitor's
/// POST) must find the detector's capture already queued, and join it; published first, a POST could queue a capture of
/// its own first, and the detector's, throttled, would not be taken. Here the detector reads a pool that is starved from
/// its first second (scripted counters in place of the runtime's), so the order is checked on every run, not caught by a
/// race one run in many.
/// </summary>
public sealed class StarvationEventOrderTests(InProcessApp app, ITestOutputHelper output) : IClassFixture<InProcessApp>
{
    private readonly InProcessApp _app = app.LogTo(output);

    [Fact]
    public async Task StarvationEvent_ReachesItsListeners_BeforeTheSampleThatDeclaredItIsPublished()
    {
        using var app = _app.WithWebHostBuilder(builder => builder.ConfigureServices(services =>
        {
            services.AddSingleton<IPoolCounters, StarvedPoolCounters>();
            services.AddSingleton<PublishedAtTheEvent>();
            services.AddSingleton<IStarvationListener>(provider => provider.GetRequiredService<PublishedAtTheEvent>());
        }));
        var sampler = app.Services.GetRequiredService<HealthSampler>();

        var (declared, published) = await app.Services.GetRequiredService<PublishedAtTheEvent>().First.DefaultTimeout();

        Assert.True(published == declared - 1, $"at the event of sample {declared}, the latest published sample was {published}");
        Assert.True(await Poll.UntilAsync(() => sampler.LatestSequence >= declared, TimeoutExtensions.Default), $"sample {declared} was never published");
        var sample = sampler.SamplesAfter(declared - 1)[0];
        Assert.True(sample.Sequence == declared && sample.Starved, $"the sample published after the event: {sample}");
    }

    /// <summary>A pool whose threads climb while a long queue waits, the work done a trickle, the CPU idle: starved.</summary>
    private sealed class StarvedPoolCounters : IPoolCounters
    {
        private int _threads = 2;

        public PoolSecond TakeSecond() => new(++_threads, QueueLength: 500, CompletedPerSecond: 2, CpuPercent: 3);
    }

    /// <summary>The first event's sample, and the latest sample published when it arrived.</summary>
    private sealed class PublishedAtTheEvent(IServiceProvider services) : IStarvationListener
    {
        private readonly TaskCompletionSource<(long Declared, long Published)> _first = new(TaskCreationOptions.RunContinuationsAsynchronously);

#pragma warning disable VSTHRD003 // deliberate: completed by the detector's thread, continuations forced off it; tests have no SynchronizationContext
        public Task<(long Declared, long Published)> First => _first.Task;
#pragma warning restore VSTHRD003

        public void OnStarvation(StarvationDeclared starvation) =>
            _first.TrySetResult((starvation.Sample.Sequence, services.GetRequiredService<HealthSampler>().LatestSequence));
    }
}

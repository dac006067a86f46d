using System.Diagnostics;
using System.Globalization;
using DiagnosticScenarios.BlockingAnalysis;
using Microsoft.AspNetCore.Mvc;
using Microsoft.Extensions.Options;

namespace DiagnosticScenarios.PoolHealth.StackCapture;

/// <summary>
/// A dump of the app's own process beside a capture (<c>POST /api/threadpool/stacks?dump=true</c>), as dotnet-monitor's
/// CollectDump action writes one: a heap dump, read back by <c>dotnet-blocking stacks FILE</c>, which names the async
/// methods a blocked thread's task waits on. Bounded: one at a time, and only where the disk has room for it.
/// </summary>
public sealed class AppDumps(IOptions<StackCaptureOptions> options)
{
    // A heap dump holds the managed heap and the threads' stacks: about the working set, which a full one can exceed.
    private const double SpaceMargin = 1.5;

    private int _writing;

    /// <summary>The folder dumps are written to: <c>StackCapture:DumpFolder</c>, or a folder under the temporary one.</summary>
    public string Folder => options.Value.DumpFolder is { Length: > 0 } folder ? Path.GetFullPath(folder) : Path.Combine(Path.GetTempPath(), "DiagnosticScenarios-dumps");

    /// <summary>
    /// Writes a heap dump of this process on a thread of its own (a starved pool is not needed) and returns its path; or
    /// the problem that says why it did not: 409 while another is written, 507 when the disk lacks room, 503 when the
    /// runtime could not write it.
    /// </summary>
    public async Task<(string? Path, ProblemDetails? Problem)> WriteAsync(CancellationToken cancellationToken)
    {
        if (Interlocked.Exchange(ref _writing, 1) == 1)
        {
            return (null, Problem(StatusCodes.Status409Conflict, "A dump is already being written.", "The app writes one dump at a time; ask again once the first is written."));
        }

        try
        {
            if (NoRoom() is { } problem)
            {
                return (null, problem);
            }

            var written = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
            var thread = new Thread(() =>
            {
                try
                {
                    written.SetResult(ProcessDumps.Write(Environment.ProcessId, Folder));
                }
                catch (DiagnosisException e)
                {
                    written.SetException(e);
                }
            })
            { IsBackground = true, Name = "Dump" };
            thread.Start();
            try
            {
                return (await written.Task.WaitAsync(cancellationToken), null);
            }
            catch (DiagnosisException e)
            {
                return (null, Problem(StatusCodes.Status503ServiceUnavailable, "The dump could not be written.", e.Message));
            }
        }
        finally
        {
            Volatile.Write(ref _writing, 0);
        }
    }

    // The disk's free space against the process's working set, before anything is written.
    private ProblemDetails? NoRoom()
    {
        Directory.CreateDirectory(Folder);
        var free = new DriveInfo(Folder).AvailableFreeSpace;
        using var process = Process.GetCurrentProcess();
        var needed = (long)(process.WorkingSet64 * SpaceMargin);
        return free >= needed
            ? null
            : Problem(StatusCodes.Status507InsufficientStorage, "No room for a dump.", string.Create(CultureInfo.InvariantCulture,
                $"A heap dump of this process needs about {needed / (1024 * 1024)} MB (its working set, with a margin); {Folder} has {free / (1024 * 1024)} MB free."));
    }

    private static ProblemDetails Problem(int status, string title, string detail) => new() { Status = status, Title = title, Detail = detail };
}

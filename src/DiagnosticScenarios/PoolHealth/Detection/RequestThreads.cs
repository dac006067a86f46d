using System.Runtime.InteropServices;
using DiagnosticScenarios.BlockingAnalysis;

namespace DiagnosticScenarios.PoolHealth.Detection;

/// <summary>
/// Which request each thread is running right now, by OS thread id (the id EventPipe gives a sampled thread): what names a
/// parked pool thread's route when a Release build's JIT has inlined the action out of its stack. The attribution
/// middleware sets a thread's label while the request holds it; the stack capture reads them all.
/// </summary>
/// <remarks>
/// Per request this costs a thread-static read and two field writes: each thread registers its slot once, the label string
/// is built once per thread and endpoint, and nothing is locked or hashed.
/// </remarks>
public static class RequestThreads
{
    private static readonly List<Slot> Slots = [];

    [ThreadStatic]
    private static Slot? _threadSlot;

    /// <summary>The calling thread's slot, registered on its first request.</summary>
    internal static Slot Current => _threadSlot ??= Register();

    /// <summary>OS thread id to the request it is serving (e.g. "GET /api/diagscenario/taskwait") and its endpoint, for the threads serving one now.</summary>
    public static IReadOnlyDictionary<int, ThreadLabel> Snapshot()
    {
        lock (Slots)
        {
            var labels = new Dictionary<int, ThreadLabel>(Slots.Count);
            foreach (var slot in Slots)
            {
                if (slot.Label is { } label)
                {
                    labels[slot.OsThreadId] = label;
                }
            }

            return labels;
        }
    }

    private static Slot Register()
    {
        var slot = new Slot(CurrentOsThreadId(), Thread.CurrentThread);
        lock (Slots)
        {
            // Pool threads retire after a while idle: their slots go when the next thread comes.
            Slots.RemoveAll(s => !s.Thread.IsAlive);
            Slots.Add(slot);
        }

        return slot;
    }

    private static int CurrentOsThreadId()
    {
        if (OperatingSystem.IsLinux())
        {
            return LinuxGetTid();
        }

        if (OperatingSystem.IsWindows())
        {
            return (int)WindowsGetCurrentThreadId();
        }

        if (OperatingSystem.IsMacOS() && MacThreadId(IntPtr.Zero, out var id) == 0)
        {
            return (int)id;
        }

        return Environment.CurrentManagedThreadId;
    }

    // Plain blittable calls: DllImport needs no unsafe code in the app, as LibraryImport's generated stubs would.
    [DllImport("libc", EntryPoint = "gettid")]
    [DefaultDllImportSearchPaths(DllImportSearchPath.SafeDirectories)]
    private static extern int LinuxGetTid();

    [DllImport("kernel32", EntryPoint = "GetCurrentThreadId")]
    [DefaultDllImportSearchPaths(DllImportSearchPath.System32)]
    private static extern uint WindowsGetCurrentThreadId();

    [DllImport("libSystem.dylib", EntryPoint = "pthread_threadid_np")]
    [DefaultDllImportSearchPaths(DllImportSearchPath.SafeDirectories)]
    private static extern int MacThreadId(IntPtr thread, out ulong threadId);

    /// <summary>One thread's label. Written by its own thread only; read by the capture.</summary>
    internal sealed class Slot(int osThreadId, Thread thread)
    {
        private string? _method;
        private string? _route;
        private EndpointLabel? _endpoint;
        private ThreadLabel? _label;
        private volatile ThreadLabel? _current;

        public int OsThreadId { get; } = osThreadId;

        public Thread Thread { get; } = thread;

        public ThreadLabel? Label => _current;

        /// <summary>
        /// This thread now runs a request for <paramref name="route"/>, served by <paramref name="endpoint"/>. Kestrel's method
        /// strings, the route and the endpoint's label are the same instances request after request: compared by reference.
        /// </summary>
        public void Enter(string method, string route, EndpointLabel endpoint)
        {
            if (!ReferenceEquals(method, _method) || !ReferenceEquals(route, _route) || !ReferenceEquals(endpoint, _endpoint))
            {
                (_method, _route, _endpoint, _label) = (method, route, endpoint, new ThreadLabel($"{method} {route}", endpoint));
            }

            _current = _label;
        }

        /// <summary>The request has handed the thread back (done, or awaiting).</summary>
        public void Leave() => _current = null;
    }
}

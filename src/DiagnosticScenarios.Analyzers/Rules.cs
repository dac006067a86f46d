using System.Reflection;
using Microsoft.CodeAnalysis;

namespace DiagnosticScenarios.Analyzers;

/// <summary>
/// The package's rules. DSB001–DSB006 fire only where ASP.NET Core requests run (<see cref="RequestPath"/>); DSB007–DSB009
/// are shapes that block a pool thread wherever they are written, console apps and tests included.
/// </summary>
public static class Rules
{
    /// <summary>
    /// Where each rule's page is: this base and <c>DSB00N.md</c>, the page of the same name in the <c>docs/analyzers</c>
    /// folder of the clone whose build packed the package (the package is installed from that clone's packed folder, and
    /// the repository has no address of its own to link to). Fixed in the assembly when it is built, from the project file.
    /// </summary>
    public static readonly string HelpLinkBase = new Uri(typeof(Rules).Assembly.GetCustomAttributes(typeof(AssemblyMetadataAttribute), inherit: false)
        .Cast<AssemblyMetadataAttribute>()
        .Single(a => a.Key == "RulePagesFolder").Value!).AbsoluteUri;

    private const string Category = "Reliability";

    public static readonly DiagnosticDescriptor BlockingCall = Rule(
        "DSB001", "Blocking call where requests run",
        "'{0}' blocks the pool thread this request runs on; {1}",
        "A synchronous call that waits for I/O or another thread holds the request's pool thread for the whole wait, and the pool gets no signal to add threads.");

    public static readonly DiagnosticDescriptor SyncOverAsync = Rule(
        "DSB002", "Waiting on a task where requests run",
        "'{0}' parks the pool thread this request runs on until the task completes; await the task instead",
        "Sync-over-async: the request's pool thread waits for work that itself needs a pool thread to finish.");

    public static readonly DiagnosticDescriptor Sleep = Rule(
        "DSB003", "Thread.Sleep where requests run",
        "'Thread.Sleep' parks the pool thread this request runs on, and the pool sees no wait to compensate for; await 'Task.Delay' instead",
        "A sleeping pool thread looks busy to the pool: under load, thread injection falls back to one or two threads a second.");

    public static readonly DiagnosticDescriptor BlockingTake = Rule(
        "DSB004", "BlockingCollection taken from where requests run",
        "'{0}' parks the pool thread this request runs on until an item arrives; BlockingCollection has no asynchronous take, so read a Channel<T> with 'await ReadAsync' instead (not a mechanical change: the rule's page shows it)",
        "A request waiting for an item holds its pool thread; when the producer needs the pool too, the waiters starve it.");

    public static readonly DiagnosticDescriptor LockAcrossBlockingCall = Rule(
        "DSB005", "Lock held across a blocking call where requests run",
        "The lock is held across the blocking call '{0}': every request behind it parks a pool thread on the lock; hold a SemaphoreSlim taken with 'await WaitAsync' across an awaited call instead",
        "Requests queue on the lock one blocking call at a time, each parking a pool thread the pool gets no signal for.");

    public static readonly DiagnosticDescriptor FakeAsync = Rule(
        "DSB006", "Blocking work moved to Task.Run where requests run",
        "Task.Run moves the blocking call '{0}' to another pool thread and holds it for the whole call; {1}",
        "Fake async: awaiting Task.Run frees the request's thread by blocking another pool thread.");

    public static readonly DiagnosticDescriptor WaitOnTaskRun = Rule(
        "DSB007", "Waiting on Task.Run",
        "'{0}' on Task.Run blocks this thread until another pool thread has run the work: two threads for one job; await the task, or call the work directly",
        "The waiting thread and the thread that runs the work are both held; with many callers, the queued work waits behind the very threads that wait for it.");

    public static readonly DiagnosticDescriptor WaitInDictionaryFactory = Rule(
        "DSB008", "Waiting on a task inside a ConcurrentDictionary factory",
        "'{0}' inside a ConcurrentDictionary factory blocks every caller that runs the factory, and concurrent callers may run it too; store the task (a Lazy<Task<T>> or the Task<T> itself) and await it instead",
        "GetOrAdd and AddOrUpdate run their factories outside the dictionary's lock, so a blocking factory blocks each racing caller.");

    public static readonly DiagnosticDescriptor BlockingTimerCallback = Rule(
        "DSB009", "Blocking timer callback",
        "The timer callback blocks in '{0}': every tick holds a pool thread for the whole wait; loop over 'await PeriodicTimer.WaitForNextTickAsync' and await the work instead",
        "System.Threading.Timer and System.Timers.Timer run their callbacks on the thread pool, whatever the app is.");

    private static DiagnosticDescriptor Rule(string id, string title, string message, string description) =>
        new(id, title, message, Category, DiagnosticSeverity.Warning, isEnabledByDefault: true, description, HelpLinkBase + id + ".md");
}

namespace DiagnosticScenarios.OffPool;

/// <summary>A route table for <see cref="ThreadedHttpServer"/>: method and exact path to a handler; HEAD is answered as GET.</summary>
public sealed class HttpRoutes
{
    private readonly Dictionary<(string Method, string Path), Action<HttpExchange>> _routes = [];

    public HttpRoutes Map(string method, string path, Action<HttpExchange> handle)
    {
        _routes.Add((method, path), handle);
        return this;
    }

    public HttpRoutes MapGet(string path, Action<HttpExchange> handle) => Map("GET", path, handle);

    /// <summary>The handler of this request's method and path, or null.</summary>
    public Action<HttpExchange>? Find(HttpRequestHead request) =>
        _routes.GetValueOrDefault((request.Method == "HEAD" ? "GET" : request.Method, request.Path));

    /// <summary>The methods <paramref name="path"/> is mapped for, for a 405's Allow header.</summary>
    public IEnumerable<string> MethodsOf(string path) => _routes.Keys.Where(k => k.Path == path).Select(k => k.Method);
}

namespace DiagnosticScenarios.Security;

/// <summary>
/// The headers every answer of both servers carries: no framing by another page (the live page has control buttons), no
/// content sniffing, and a content security policy that fits the page's own scripts (files of its origin, no inline code).
/// </summary>
public static class SecurityHeaders
{
    /// <summary>For any answer: no page may frame it, no browser may sniff its type.</summary>
    public static IReadOnlyList<(string Name, string Value)> Framing { get; } =
    [
        ("X-Frame-Options", "DENY"),
        ("Content-Security-Policy", "frame-ancestors 'none'"),
        ("X-Content-Type-Options", "nosniff"),
    ];

    /// <summary>
    /// For the live page's answers: its scripts and styles from its own origin only, its images drawn or saved in the page,
    /// and its requests to its own origin and to the app's, where its controls go (<paramref name="controlsAt"/>, or none).
    /// </summary>
    public static IReadOnlyList<(string Name, string Value)> ForPage(string? controlsAt) =>
    [
        ("X-Frame-Options", "DENY"),
        ("Content-Security-Policy", PagePolicy(controlsAt)),
        ("X-Content-Type-Options", "nosniff"),
    ];

    /// <summary>The page's policy; <c>frame-ancestors 'none'</c> as in <see cref="Framing"/>.</summary>
    public static string PagePolicy(string? controlsAt) =>
        $"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'{(string.IsNullOrEmpty(controlsAt) ? "" : " " + controlsAt)}; "
        + "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

    /// <summary>
    /// Kestrel's answers: the page's policy (the app serves the page itself when the page's own server is not listening),
    /// except Swagger UI's, whose bundle sets inline styles: framing and sniffing only there.
    /// </summary>
    public static IApplicationBuilder UseSecurityHeaders(this IApplicationBuilder app)
    {
        var page = ForPage(controlsAt: null);
        return app.Use((context, next) =>
        {
            var headers = context.Request.Path.StartsWithSegments("/swagger", StringComparison.OrdinalIgnoreCase) ? Framing : page;
            // When the response starts: the exception handler clears the headers of a response it rewrites.
            context.Response.OnStarting(() =>
            {
                foreach (var (name, value) in headers)
                {
                    context.Response.Headers[name] = value;
                }

                return Task.CompletedTask;
            });
            return next(context);
        });
    }
}

using System.Globalization;
using Microsoft.AspNetCore.Mvc.ModelBinding;

namespace DiagnosticScenarios.Problems;

/// <summary>
/// How every number and every choice in a route or query is read, by the controllers and by the hand-parsed controls
/// alike: a whole number is ASCII digits only, and a choice is one of its names. MVC's own binders read more than they
/// say: <c>delayMs=0x10</c> as 16 (hexadecimal), <c>delayMs=+5</c> and <c>delayMs=%201</c> as numbers, and
/// <c>mode=1</c> or <c>mode=blocking,async</c> as the enum's value 1, where the error message promises "a whole number"
/// and "one of: blocking, async".
/// </summary>
public static class StrictBinding
{
    public static bool TryParseWholeNumber(string? text, out int value) =>
        int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out value);

    /// <summary>Binds <c>int</c>, <c>int?</c> and enums from the route and the query strictly; anything else as MVC does.</summary>
    public static void UseStrictBinding(this IList<IModelBinderProvider> providers) => providers.Insert(0, new Provider());

    private sealed class Provider : IModelBinderProvider
    {
        public IModelBinder? GetBinder(ModelBinderProviderContext context)
        {
            // Route and query values only: a body or a header keeps MVC's binder.
            var source = context.BindingInfo.BindingSource;
            var fromRouteOrQuery = source is null || source == BindingSource.Query || source == BindingSource.Path || source == BindingSource.ModelBinding;
            var type = context.Metadata.UnderlyingOrModelType;
            return fromRouteOrQuery && (type == typeof(int) || type.IsEnum) ? new Binder(type) : null;
        }
    }

    private sealed class Binder(Type type) : IModelBinder
    {
        public Task BindModelAsync(ModelBindingContext bindingContext)
        {
            var name = bindingContext.ModelName;
            var given = bindingContext.ValueProvider.GetValue(name);
            if (given == ValueProviderResult.None)
            {
                return Task.CompletedTask;
            }

            bindingContext.ModelState.SetModelValue(name, given);
            var text = given.FirstValue;
            object? value = type.IsEnum
                ? Enum.GetNames(type).FirstOrDefault(n => string.Equals(n, text, StringComparison.OrdinalIgnoreCase)) is { } match ? Enum.Parse(type, match) : null
                : TryParseWholeNumber(text, out var number) ? number : null;
            if (value is null)
            {
                var metadata = bindingContext.ModelMetadata;
                bindingContext.ModelState.TryAddModelError(name,
                    metadata.ModelBindingMessageProvider.AttemptedValueIsInvalidAccessor(text ?? string.Empty, metadata.DisplayName ?? name));
                return Task.CompletedTask;
            }

            bindingContext.Result = ModelBindingResult.Success(value);
            return Task.CompletedTask;
        }
    }
}

using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;
using System.Reflection.PortableExecutable;
using System.Text;
using DiagnosticScenarios.BlockingAnalysis;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.Emit;
using Microsoft.CodeAnalysis.Text;

namespace DiagnosticScenarios.Tests.BlockingAnalysis;

/// <summary>
/// File and line of a call, read from the portable PDB of an assembly compiled here (another namespace, optimized as a
/// Release build is, its source on disk), through the reader every snapshot and wait trace uses.
/// </summary>
public sealed class SourceLinesTests : IDisposable
{
    // C# files a lock on System.Threading.Lock under no line of its own: the call that takes it lies in the sequence point
    // of the brace before the statement, so a blocked thread's frame maps to `{`; a comment or a #pragma may come between.
    private const string Source = """
        namespace Northwind.Ledger;

        public static class Journal
        {
            private static readonly System.Threading.Lock Gate = new();

            public static int Post(int amount)
            {
        #pragma warning disable CS0162 // a deliberate block carries its suppression above it
                // one entry at a time
                lock (Gate)
                {
                    return Settle(amount);
                }
        #pragma warning restore CS0162
            }

            public static int Adjust(int amount)
            {
                var total = amount * 2;
                lock (Gate)
                {
                    total += Settle(amount);
                }

                return total;
            }

            private static int Settle(int amount)
            {
                System.Threading.Thread.Sleep(amount);
                return amount;
            }
        }

        // A driver's two faces: a blocking read and its asynchronous twin.
        public sealed class Drawer
        {
            public int Count()
            {
                System.Threading.Thread.Sleep(1);
                return 1;
            }

            public System.Threading.Tasks.Task<int> CountAsync() => System.Threading.Tasks.Task.FromResult(1);
        }

        // Small methods a Release JIT inlines into their callers, which then hold the sleep with no frame of their own.
        public sealed class Shelf
        {
            private readonly int _delay = 1;

            public int Restock()
            {
                var counted = Count();
                return counted + 1;
            }

            public int Audit() => Recount();

            public int Tally()
            {
                System.Threading.Thread.Sleep(2);
                return Count();
            }

            private int Recount() => Count() * 2;

            private int Count()
            {
                System.Threading.Thread.Sleep(_delay);
                return 1;
            }
        }
        """;

    private readonly string _folder = Directory.CreateTempSubdirectory("sourcelines-").FullName;

    // A lock statement's call, filed under the brace before it, is named by the lock's line; a call with a line of its own by
    // that line. Where the JIT inlined Lock.EnterScope, the frame below the method is EnterScope's own callee, a call the IL
    // does not make.
    [Theory]
    [InlineData(OptimizationLevel.Release, "System.Threading.Lock.EnterScope", "lock (Gate)")]
    [InlineData(OptimizationLevel.Debug, "System.Threading.Lock.EnterScope", "lock (Gate)")]
    [InlineData(OptimizationLevel.Release, "System.Threading.Lock.EnterAndGetCurrentThreadId", "lock (Gate)")]
    [InlineData(OptimizationLevel.Release, "Northwind.Ledger.Journal.Settle", "return Settle(amount);")]
    [InlineData(OptimizationLevel.Debug, "Northwind.Ledger.Journal.Settle", "return Settle(amount);")]
    public void ACallFromTheMethodsStart_IsNamedByTheLineOfTheStatementMakingIt(OptimizationLevel optimization, string callee, string statement)
    {
        var (module, source) = Compile(optimization);
        var post = MethodToken(module, "Journal", "Post");
        using var lines = new SourceLines();

        var (line, missing) = lines.Find(new IlLocation(ModuleFile.At(module), post, IlOffset: 0), callee);

        Assert.True(line is not null, missing);
        Assert.Equal(source, line.File);
        Assert.Equal((LineOf(statement), statement), (line.Line, line.Text));
    }

    // After another statement the lock's call is filed under that statement's line, not the lock's: `var total = amount * 2;`
    // must not be named for the lock below it.
    [Theory]
    [InlineData(OptimizationLevel.Release, "System.Threading.Lock.EnterScope")]
    [InlineData(OptimizationLevel.Debug, "System.Threading.Lock.EnterScope")]
    [InlineData(OptimizationLevel.Release, "System.Threading.Lock.EnterAndGetCurrentThreadId")]
    public void ALockAfterAnotherStatement_IsNamedByTheLocksLine(OptimizationLevel optimization, string callee)
    {
        var (module, source) = Compile(optimization);
        var adjust = MethodToken(module, "Journal", "Adjust");
        using var lines = new SourceLines();

        var (line, missing) = lines.Find(new IlLocation(ModuleFile.At(module), adjust, IlOffset: 0), callee);

        Assert.True(line is not null, missing);
        Assert.Equal((source, LineOf("lock (Gate)", after: "var total"), "lock (Gate)"), (line.File, line.Line, line.Text));
    }

    // A workshop edits the file while the app runs: the lines the PDB names are no longer the build's, so no text is shown
    // (it would be a fragment of some other line), and the line says why.
    [Fact]
    public void ASourceFileEditedSinceTheBuild_GivesTheBuildsLine_WithoutItsText_SayingSo()
    {
        var (module, source) = Compile(OptimizationLevel.Release);
        var post = MethodToken(module, "Journal", "Post");
        File.WriteAllText(source, "// edited\n// since the build\n" + Source, Encoding.UTF8);
        using var lines = new SourceLines();

        var (line, missing) = lines.Find(new IlLocation(ModuleFile.At(module), post, IlOffset: 0), "Northwind.Ledger.Journal.Settle");

        Assert.True(line is not null, missing);
        Assert.Equal((LineOf("return Settle(amount);"), null, true), (line.Line, line.Text, line.ChangedSinceTheBuild));
        Assert.Contains("changed since the build", line.ToString(), StringComparison.Ordinal);
    }

    // A single-file app's bundle holds its modules: the trace names a module path with no file behind it, and the PDB the
    // publish put beside the bundle gives the lines when its id is the one the runtime reported for the module.
    [Fact]
    public void AModuleWithNoFile_IsNamedFromThePdbBesideItsPath_WhenThePdbsIdIsTheModules()
    {
        var (module, source) = Compile(OptimizationLevel.Release);
        var settle = MethodToken(module, "Journal", "Settle");
        var signature = PdbSignature(module);
        File.Delete(module);
        var (line, missing) = FindFirstLine(ModuleFile.At(module) with { PdbSignature = signature }, settle);

        Assert.True(line is not null, missing);
        Assert.Equal((source, LineOf("System.Threading.Thread.Sleep(amount);")), (line.File, line.Line));
    }

    [Fact]
    public void AModuleWithNoFile_HasNoLine_WhenThePdbBesideItsPathIsAnotherBuilds()
    {
        var (module, _) = Compile(OptimizationLevel.Release);
        var settle = MethodToken(module, "Journal", "Settle");
        File.Delete(module);
        var (line, missing) = FindFirstLine(ModuleFile.At(module) with { PdbSignature = Guid.NewGuid() }, settle);

        Assert.Null(line);
        Assert.Contains("no portable PDB with its id is beside it", missing, StringComparison.Ordinal);
    }

    // <DebugType>embedded</DebugType>: the PDB inside the module, no file beside it.
    [Fact]
    public void AModuleWithItsPdbEmbedded_IsNamedFromIt()
    {
        var (module, source) = Compile(OptimizationLevel.Release, DebugInformationFormat.Embedded);
        var settle = MethodToken(module, "Journal", "Settle");
        var (line, missing) = FindFirstLine(ModuleFile.At(module), settle);

        Assert.False(File.Exists(Path.ChangeExtension(module, ".pdb")), "a PDB file beside the module: this tests nothing");
        Assert.True(line is not null, missing);
        Assert.Equal((source, LineOf("System.Threading.Thread.Sleep(amount);")), (line.File, line.Line));
    }

    // <DebugType>none</DebugType>, or the .pdb left out of the deployment: no line, and the report says which PDB and how to get one.
    [Fact]
    public void AModuleWithNoPdb_HasNoLine_AndSaysHowToGetOne()
    {
        var (module, _) = Compile(OptimizationLevel.Release);
        var settle = MethodToken(module, "Journal", "Settle");
        File.Delete(Path.ChangeExtension(module, ".pdb"));
        var (line, missing) = FindFirstLine(ModuleFile.At(module), settle);

        Assert.Null(line);
        Assert.Contains($"no portable PDB beside {Path.GetFileName(module)} nor embedded in it: build with <DebugType>portable</DebugType> (the default) or embedded, and deploy the .pdb", missing, StringComparison.Ordinal);
    }

    // A rebuilt module beside the PDB of an earlier build: the PDB is there, but not this module's.
    [Fact]
    public void AModuleBesideAnotherBuildsPdb_HasNoLine_AndSaysThePdbIsAnotherBuilds()
    {
        var (other, _) = Compile(OptimizationLevel.Debug);
        var (module, _) = Compile(OptimizationLevel.Release);
        File.Copy(Path.ChangeExtension(other, ".pdb"), Path.ChangeExtension(module, ".pdb"), overwrite: true);
        var (line, missing) = FindFirstLine(ModuleFile.At(module), MethodToken(module, "Journal", "Settle"));

        Assert.Null(line);
        Assert.Contains($"the PDB beside {Path.GetFileName(module)} is from another build", missing, StringComparison.Ordinal);
    }

    // A module compiled ahead of time (the shared framework's, as PublishReadyToRun compiles an app's) runs code the
    // runtime maps to no IL; a frame in it gets no line, and the report says why and how to get one.
    [Fact]
    public void IsReadyToRun_TellsAPrecompiledModule_FromOneTheCompilerWrote()
    {
        var (module, _) = Compile(OptimizationLevel.Release);
        using var lines = new SourceLines();

        Assert.Equal((true, false), (lines.IsReadyToRun(typeof(Enumerable).Assembly.Location), lines.IsReadyToRun(module)));
    }

    [Fact]
    public void AsyncTwin_IsTheMethodOfTheSameTypeNamedWithAsync_WhereThereIsOne()
    {
        var (module, _) = Compile(OptimizationLevel.Release);
        using var lines = new SourceLines();
        string? TwinOf(string type, string method) => lines.AsyncTwin(new IlLocation(ModuleFile.At(module), MethodToken(module, type, method), IlOffset: 0));

        Assert.Equal("CountAsync", TwinOf("Drawer", "Count"));
        Assert.Null(TwinOf("Drawer", "CountAsync"));
        Assert.Null(TwinOf("Journal", "Settle"));
    }

    [Theory]
    [InlineData("Restock", "var counted = Count();")]
    [InlineData("Audit", "public int Audit() => Recount();")]
    public void FindCall_NamesTheModulesMethodWhoseCallTheFrameHoldsWithNoFrameOfItsOwn_AndItsLine(string frame, string callingLine)
    {
        var (module, source) = Compile(OptimizationLevel.Release);
        using var lines = new SourceLines();
        var location = new IlLocation(ModuleFile.At(module), MethodToken(module, "Shelf", frame), IlOffset: 0);

        var (line, missing, inlined) = lines.FindCall(location, "System.Threading.Thread.Sleep");

        Assert.NotNull(inlined);
        Assert.Equal("Shelf.Count", inlined.Method);
        Assert.Equal((source, LineOf("System.Threading.Thread.Sleep(_delay);"), "System.Threading.Thread.Sleep(_delay);"), (inlined.Source?.File, inlined.Source?.Line, inlined.Source?.Text));
        Assert.True(line is not null, missing);
        Assert.Equal(LineOf(callingLine), line.Line);
    }

    [Fact]
    public void FindCall_NamesNoInlinedMethod_WhereTheFrameMakesTheCallItself()
    {
        var (module, _) = Compile(OptimizationLevel.Release);
        using var lines = new SourceLines();

        Assert.Null(lines.FindCall(new IlLocation(ModuleFile.At(module), MethodToken(module, "Shelf", "Tally"), IlOffset: 0), "System.Threading.Thread.Sleep").Inlined);
        Assert.Null(lines.FindCall(new IlLocation(ModuleFile.At(module), MethodToken(module, "Shelf", "Count"), IlOffset: 0), "System.Threading.Thread.Sleep").Inlined);
    }

    public void Dispose() => Directory.Delete(_folder, recursive: true);

    // The line of a method's first IL instruction, read by a reader of its own.
    private static (SourceLine? Line, string? Missing) FindFirstLine(ModuleFile module, int methodToken)
    {
        using var lines = new SourceLines();
        return lines.Find(new IlLocation(module, methodToken, IlOffset: 0));
    }

    // What the runtime reports as the module's PDB signature: the GUID of its CodeView debug directory entry.
    private static Guid PdbSignature(string module)
    {
        using var pe = new PEReader(File.OpenRead(module));
        return pe.ReadCodeViewDebugDirectoryData(pe.ReadDebugDirectory().Single(e => e.Type == DebugDirectoryEntryType.CodeView)).Guid;
    }

    // The first line that is the text, after the first line that starts with `after` when given.
    private static int LineOf(string text, string? after = null)
    {
        var lines = Source.Split('\n').Select(line => line.Trim()).ToList();
        var from = after is null ? 0 : lines.FindIndex(line => line.StartsWith(after, StringComparison.Ordinal));
        return lines.FindIndex(from, line => line == text) + 1;
    }

    private (string Module, string Source) Compile(OptimizationLevel optimization, DebugInformationFormat debugInformation = DebugInformationFormat.PortablePdb)
    {
        var name = $"Northwind.Ledger.{optimization}";
        var source = Path.Combine(_folder, $"{name}.Journal.cs");
        File.WriteAllText(source, Source, Encoding.UTF8);
        var tree = CSharpSyntaxTree.ParseText(SourceText.From(Source, Encoding.UTF8), path: source);
        var compilation = CSharpCompilation.Create(name, [tree],
            ((string)AppContext.GetData("TRUSTED_PLATFORM_ASSEMBLIES")!).Split(Path.PathSeparator, StringSplitOptions.RemoveEmptyEntries)
                .Where(path => Path.GetFileName(path) is "System.Runtime.dll" or "System.Private.CoreLib.dll" or "System.Threading.dll")
                .Select(path => MetadataReference.CreateFromFile(path)),
            new CSharpCompilationOptions(OutputKind.DynamicallyLinkedLibrary, optimizationLevel: optimization));
        var module = Path.Combine(_folder, $"{name}.dll");
        using (var pe = File.Create(module))
        using (var pdb = debugInformation == DebugInformationFormat.PortablePdb ? File.Create(Path.ChangeExtension(module, ".pdb")) : null)
        {
            var emitted = compilation.Emit(pe, pdb, options: new EmitOptions(debugInformationFormat: debugInformation));
            Assert.True(emitted.Success, string.Join('\n', emitted.Diagnostics));
        }

        return (module, source);
    }

    private static int MethodToken(string module, string type, string method)
    {
        using var pe = new PEReader(File.OpenRead(module));
        var metadata = pe.GetMetadataReader();
        var handle = metadata.MethodDefinitions.Single(h =>
        {
            var definition = metadata.GetMethodDefinition(h);
            return metadata.GetString(definition.Name) == method && metadata.GetString(metadata.GetTypeDefinition(definition.GetDeclaringType()).Name) == type;
        });
        return MetadataTokens.GetToken(handle);
    }
}

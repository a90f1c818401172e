// The console program dotnet_test.sh installs the LibNetTrace package into (a
// fresh `dotnet new console` project, then this file) and runs, as a JIT build
// and NativeAOT-published: a file's hot methods, as the README's first example.
using System;
using System.IO;
using System.Linq;
using LibNetTrace;

if (args.Length != 1)
{
    Console.Error.WriteLine("usage: Consumer FILE.nettrace");
    return 2;
}
try
{
    using TraceFile trace = TraceFile.Open(args[0]);
    Console.WriteLine($"samples {trace.Samples.Count()}");
    foreach (TopRow row in trace.Top(new TopOptions { Rows = 3 }).Tables[0].Rows)
        Console.WriteLine($"{row.Exclusive,8} {row.Inclusive,8}  {row.Name}");
    using var pprof = new MemoryStream();
    trace.ExportPprof(pprof);
    Console.WriteLine($"pprof {pprof.Length} bytes");
    return 0;
}
catch (NetTraceException e)
{
    Console.Error.WriteLine($"{args[0]}: {e.Status} at byte {e.Offset}: {e.Message}");
    return 1;
}

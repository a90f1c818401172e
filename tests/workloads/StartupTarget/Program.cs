// StartupTarget: `nettrace collect -- dotnet StartupTarget.dll MS CODE` starts
// it with the runtime suspended until the session runs.  Main spins in
// SpinInMain for MS milliseconds (default 1000) straight away and returns
// CODE (default 0), so the trace's first managed samples are in Main, Main is
// JIT-compiled during the session, and the exit status can be checked.
using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace StartupTarget
{
    static class Program
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        static long SpinInMain(long ms)
        {
            var clock = Stopwatch.StartNew();
            long acc = 17;
            while (clock.ElapsedMilliseconds < ms)
                for (int i = 0; i < 100000; i++)
                    acc = acc * 31 + (i ^ (acc >> 3));
            return acc;
        }

        static int Main(string[] args)
        {
            long ms = args.Length > 0 ? long.Parse(args[0]) : 1000;
            GC.KeepAlive(SpinInMain(ms));
            return args.Length > 1 ? int.Parse(args[1]) : 0;
        }
    }
}

// LiveTarget: the session tests attach to this process.
//
// Two named threads spin, each in a method of its own (Alpha.SpinAlpha and
// Beta.SpinBeta), so the samples of each thread have a distinctive top frame.
// Thread names are not in NetTrace V4 streams, so each thread prints its OS
// thread id ("thread alpha 1234") and the test matches samples by that id.
// Both methods are compiled (and run) before "ready" is printed, so a session
// started afterwards only learns their names from rundown.
//
// Optional argument: seconds to live before exiting (default 60), so a test
// that dies never leaves the target behind for long.
using System;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;

namespace LiveTarget
{
    static class Native
    {
        [DllImport("libc", EntryPoint = "gettid")]
        public static extern int GetTid();
    }

    static class Alpha
    {
        public static volatile bool Stop;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static long SpinAlpha(long n)
        {
            long acc = 17;
            for (long i = 0; i < n; i++)
                acc = acc * 31 + (i ^ (acc >> 3));
            return acc;
        }

        public static void Run(object ready)
        {
            Console.WriteLine("thread alpha " + Native.GetTid());
            Console.Out.Flush();
            long sink = 0;
            sink += SpinAlpha(1000);
            ((CountdownEvent)ready).Signal();
            while (!Stop)
                sink += SpinAlpha(2000000);
            GC.KeepAlive(sink);
        }
    }

    static class Beta
    {
        public static volatile bool Stop;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static double SpinBeta(int n)
        {
            double acc = 1.5;
            for (int i = 1; i < n; i++)
                acc = acc / 1.0000001 + Math.Sqrt(i);
            return acc;
        }

        public static void Run(object ready)
        {
            Console.WriteLine("thread beta " + Native.GetTid());
            Console.Out.Flush();
            double sink = 0;
            sink += SpinBeta(1000);
            ((CountdownEvent)ready).Signal();
            while (!Stop)
                sink += SpinBeta(2000000);
            GC.KeepAlive(sink);
        }
    }

    static class Program
    {
        static int Main(string[] args)
        {
            int seconds = args.Length > 0 ? int.Parse(args[0]) : 60;
            var ready = new CountdownEvent(2);
            var a = new Thread(Alpha.Run) { Name = "alpha", IsBackground = true };
            var b = new Thread(Beta.Run) { Name = "beta", IsBackground = true };
            a.Start(ready);
            b.Start(ready);
            ready.Wait();
            Console.WriteLine("ready " + Environment.ProcessId);
            Console.Out.Flush();
            Thread.Sleep(TimeSpan.FromSeconds(seconds));
            Alpha.Stop = true;
            Beta.Stop = true;
            return 0;
        }
    }
}

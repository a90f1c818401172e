// ProfileLoad: one workload per profile, each doing a known amount of one
// thing, so a trace of it can be checked against numbers fixed in advance.
//
//   ProfileLoad MODE [--go FILE] [--rounds N] [--quit FILE]
//
// MODE is alloc, throw, contention or gc.  The process prints "ready PID",
// waits until FILE exists (--go; so a session attached by the recorder sees
// the whole round), runs N rounds (0: until killed; default 1), prints
// "done", then waits for the --quit file (so the recorder's session can stop
// with its rundown while the runtime is still alive).  It never lives longer
// than 120 s.
//
// The quantities a round produces are also written into the trace, through
// the Workloads-Profiles EventSource (event 1 Expect(key, value)), so a test
// reads the expectation from the same file it checks.
using System;
using System.Diagnostics;
using System.Diagnostics.Tracing;
using System.IO;
using System.Runtime;
using System.Runtime.CompilerServices;
using System.Threading;

namespace Workloads.ProfileLoad
{
    [EventSource(Name = "Workloads-Profiles")]
    internal sealed class Expectations : EventSource
    {
        public static readonly Expectations Log = new Expectations();

        [Event(1, Level = EventLevel.Informational)]
        public void Expect(string key, long value) => WriteEvent(1, key, value);
    }

    // A 48-byte object on 64-bit (16 header + 4 longs).
    internal sealed class Node
    {
        public long A, B, C, D;
    }

    internal sealed class WorkloadException : Exception
    {
        public WorkloadException(string m) : base(m) { }
    }

    internal static class Sink
    {
        public static object Keep;
        public static long Count;
    }

    // Allocation mix: each kind from its own method, so each has its own stack.
    internal static class Allocs
    {
        public const int Nodes = 1_000_000;          // 48 MB of Node
        public const int Buffers = 20_000;           // byte[1000]: 20.5 MB, small object heap
        public const int LargeCount = 100;           // byte[200_000]: 20 MB, large object heap
        public const int PinnedCount = 1_000;        // pinned byte[10_000]: 10 MB, pinned object heap

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void AllocNodes()
        {
            for (int i = 0; i < Nodes; i++)
                Sink.Keep = new Node { A = i, B = i, C = i, D = i };
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void AllocBuffers()
        {
            for (int i = 0; i < Buffers; i++)
                Sink.Keep = new byte[1000];
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void AllocLarge()
        {
            for (int i = 0; i < LargeCount; i++)
                Sink.Keep = new byte[200_000];
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void AllocPinned()
        {
            for (int i = 0; i < PinnedCount; i++)
                Sink.Keep = GC.AllocateArray<byte>(10_000, pinned: true);
        }

        public static void Round()
        {
            long before = GC.GetAllocatedBytesForCurrentThread();
            AllocNodes();
            long nodes = GC.GetAllocatedBytesForCurrentThread() - before;
            before = GC.GetAllocatedBytesForCurrentThread();
            AllocBuffers();
            long buffers = GC.GetAllocatedBytesForCurrentThread() - before;
            before = GC.GetAllocatedBytesForCurrentThread();
            AllocLarge();
            long large = GC.GetAllocatedBytesForCurrentThread() - before;
            before = GC.GetAllocatedBytesForCurrentThread();
            AllocPinned();
            long pinned = GC.GetAllocatedBytesForCurrentThread() - before;
            Expectations.Log.Expect("alloc_bytes Workloads.ProfileLoad.Node", nodes);
            Expectations.Log.Expect("alloc_bytes System.Byte[] soh", buffers);
            Expectations.Log.Expect("alloc_bytes System.Byte[] loh", large);
            Expectations.Log.Expect("alloc_bytes System.Byte[] poh", pinned);
        }
    }

    internal static class Throws
    {
        public const int Invalid = 300, Argument = 200, Workload = 100;

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void ThrowInvalid(int i) => throw new InvalidOperationException("invalid " + (i % 3));

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void ThrowArgument(int i) => throw new ArgumentException("argument");

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void ThrowWorkload(int i) => throw new WorkloadException("workload");

        public static void Round()
        {
            for (int i = 0; i < Invalid; i++)
                try { ThrowInvalid(i); } catch (InvalidOperationException) { Sink.Count++; }
            for (int i = 0; i < Argument; i++)
                try { ThrowArgument(i); } catch (ArgumentException) { Sink.Count++; }
            for (int i = 0; i < Workload; i++)
                try { ThrowWorkload(i); } catch (WorkloadException) { Sink.Count++; }
            Expectations.Log.Expect("throws System.InvalidOperationException", Invalid);
            Expectations.Log.Expect("throws System.ArgumentException", Argument);
            Expectations.Log.Expect("throws Workloads.ProfileLoad.WorkloadException", Workload);
        }
    }

    // Lock contention: a holder takes the lock and keeps it 40 ms; the waiter,
    // told the lock is held, tries to take it and blocks.  The waiter measures
    // each wait itself.
    internal static class Contention
    {
        public const int Rounds = 20, HoldMs = 40;
        static readonly object Gate = new object();

        [MethodImpl(MethodImplOptions.NoInlining)]
        static long WaitForGate()
        {
            long t0 = Stopwatch.GetTimestamp();
            lock (Gate)
            {
                return Stopwatch.GetTimestamp() - t0;
            }
        }

        public static void Round()
        {
            using var held = new ManualResetEventSlim();
            using var released = new ManualResetEventSlim();
            long waitedTicks = 0;
            var waiter = new Thread(() =>
            {
                for (int i = 0; i < Rounds; i++)
                {
                    held.Wait();
                    held.Reset();
                    waitedTicks += WaitForGate();
                    released.Set();
                }
            }) { Name = "waiter" };
            waiter.Start();
            for (int i = 0; i < Rounds; i++)
            {
                lock (Gate)
                {
                    held.Set();
                    Thread.Sleep(HoldMs);
                }
                released.Wait();
                released.Reset();
            }
            waiter.Join();
            Expectations.Log.Expect("contentions", Rounds);
            Expectations.Log.Expect("contention_wait_ns", (long)(waitedTicks * (1e9 / Stopwatch.Frequency)));
        }
    }

    internal static class Collections
    {
        public const int Gen0 = 5, Gen1 = 3, Gen2 = 2;

        public static void Round()
        {
            int[] before = { GC.CollectionCount(0), GC.CollectionCount(1), GC.CollectionCount(2) };
            for (int i = 0; i < Gen0; i++)
            {
                Sink.Keep = new byte[100_000];
                GC.Collect(0, GCCollectionMode.Forced, blocking: true);
            }
            for (int i = 0; i < Gen1; i++)
            {
                Sink.Keep = new byte[100_000];
                GC.Collect(1, GCCollectionMode.Forced, blocking: true);
            }
            for (int i = 0; i < Gen2; i++)
            {
                Sink.Keep = new byte[100_000];
                GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
            }
            // CollectionCount(n) counts collections of generation n or higher.
            int c2 = GC.CollectionCount(2) - before[2], c1 = GC.CollectionCount(1) - before[1] - c2,
                c0 = GC.CollectionCount(0) - before[0] - c1 - c2;
            Expectations.Log.Expect("gcs gen0", c0);
            Expectations.Log.Expect("gcs gen1", c1);
            Expectations.Log.Expect("gcs gen2", c2);
        }
    }

    internal static class Program
    {
        private static int Main(string[] args)
        {
            if (args.Length < 1)
            {
                Console.Error.WriteLine("usage: ProfileLoad alloc|throw|contention|gc [--go FILE] [--rounds N] [--quit FILE]");
                return 2;
            }
            string mode = args[0], go = null, quit = null;
            int rounds = 1;
            for (int i = 1; i + 1 < args.Length; i += 2)
            {
                if (args[i] == "--go") go = args[i + 1];
                else if (args[i] == "--rounds") rounds = int.Parse(args[i + 1]);
                else if (args[i] == "--quit") quit = args[i + 1];
            }
            Action round = mode switch
            {
                "alloc" => Allocs.Round,
                "throw" => Throws.Round,
                "contention" => Contention.Round,
                "gc" => Collections.Round,
                _ => null,
            };
            if (round == null)
            {
                Console.Error.WriteLine("unknown mode " + mode);
                return 2;
            }
            var lifetime = Stopwatch.StartNew();
            var watchdog = new Thread(() => { Thread.Sleep(120_000); Environment.Exit(3); }) { IsBackground = true };
            watchdog.Start();
            Console.WriteLine("ready " + Environment.ProcessId);
            Console.Out.Flush();
            while (go != null && !File.Exists(go))
                Thread.Sleep(10);
            for (int r = 0; rounds == 0 || r < rounds; r++)
                round();
            Console.WriteLine("done");
            Console.Out.Flush();
            while (quit != null && !File.Exists(quit))
                Thread.Sleep(10);
            return 0;
        }
    }
}

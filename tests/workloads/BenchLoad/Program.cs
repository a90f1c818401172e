// BenchLoad: a multi-threaded workload whose CPU-sample trace looks like a
// real service's, for the large benchmark traces (bench/record-large.sh).
//
//   BenchLoad [THREADS [SECONDS]]     defaults: 24 threads, run until killed
//
// What makes the trace realistic and large:
// * many threads (THREADS workers, plus a few that mostly wait on locks and
//   timers), each sampled every millisecond;
// * deep and varied managed stacks: every request walks a random path 8..40
//   calls deep through generic methods instantiated over value types, so each
//   (method, type arguments) pair is a distinct JIT-compiled body -- about a
//   thousand of them -- and tiered compilation re-JITs the hot ones;
// * leaves that do different kinds of work in the BCL (sorting, hashing,
//   dictionaries, string formatting, LINQ, allocation), so frames also land in
//   System.Private.CoreLib and System.Linq;
// * a steady trickle of new code: a producer thread compiles a fresh
//   DynamicMethod every few milliseconds and the workers call it (JIT load
//   events all along the trace, and unloads when the GC collects them);
// * garbage: requests allocate, so the GC runs throughout.
// It prints "ready <pid>" once every worker has started.
using System;
using System.Collections.Generic;
using System.Linq;
using System.Reflection.Emit;
using System.Runtime.CompilerServices;
using System.Text;
using System.Threading;

namespace Workloads.BenchLoad
{
    // Value types whose instantiations of the generic walkers below each get
    // their own compiled code (the JIT shares code only for reference types).
    internal interface IStep { int Apply(int x); }
    internal struct S0 : IStep { public int Apply(int x) => x * 3 + 1; }
    internal struct S1 : IStep { public int Apply(int x) => x ^ (x >> 3); }
    internal struct S2 : IStep { public int Apply(int x) => x + 0x9E37; }
    internal struct S3 : IStep { public int Apply(int x) => (x << 5) - x; }
    internal struct S4 : IStep { public int Apply(int x) => x * 7 ^ 0x55; }
    internal struct S5 : IStep { public int Apply(int x) => x - (x >> 2); }
    internal struct S6 : IStep { public int Apply(int x) => x * 13 + 11; }
    internal struct S7 : IStep { public int Apply(int x) => ~x + (x >> 7); }
    internal struct S8 : IStep { public int Apply(int x) => x * 17 ^ (x >> 11); }
    internal struct S9 : IStep { public int Apply(int x) => x + (x << 9); }
    internal struct S10 : IStep { public int Apply(int x) => x * 19 - 5; }
    internal struct S11 : IStep { public int Apply(int x) => x ^ 0x3C3C3C; }

    internal sealed class Request
    {
        public int Seed;
        public int Depth;
        public long Acc;
    }

    internal static class Walk
    {
        // Pick the next frame from the request's seed: one of three generic
        // walkers, instantiated over <TPrev, next step type>.
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void Next<TA>(Request r) where TA : struct, IStep
        {
            r.Seed = r.Seed * 1103515245 + 12345;
            int k = (int)((uint)r.Seed >> 16);
            if (--r.Depth <= 0)
            {
                Leaves.Run(r, k);
                return;
            }
            switch (k % 12)
            {
                case 0: Dispatch<TA, S0>(r, k); break;
                case 1: Dispatch<TA, S1>(r, k); break;
                case 2: Dispatch<TA, S2>(r, k); break;
                case 3: Dispatch<TA, S3>(r, k); break;
                case 4: Dispatch<TA, S4>(r, k); break;
                case 5: Dispatch<TA, S5>(r, k); break;
                case 6: Dispatch<TA, S6>(r, k); break;
                case 7: Dispatch<TA, S7>(r, k); break;
                case 8: Dispatch<TA, S8>(r, k); break;
                case 9: Dispatch<TA, S9>(r, k); break;
                case 10: Dispatch<TA, S10>(r, k); break;
                default: Dispatch<TA, S11>(r, k); break;
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static void Dispatch<TA, TB>(Request r, int k) where TA : struct, IStep where TB : struct, IStep
        {
            switch ((k >> 4) % 3)
            {
                case 0: Parse<TA, TB>(r); break;
                case 1: Validate<TA, TB>(r); break;
                default: Transform<TA, TB>(r); break;
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static void Parse<TA, TB>(Request r) where TA : struct, IStep where TB : struct, IStep
        {
            r.Acc += default(TA).Apply(r.Seed) + default(TB).Apply((int)r.Acc);
            Next<TB>(r);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static void Validate<TA, TB>(Request r) where TA : struct, IStep where TB : struct, IStep
        {
            r.Acc ^= default(TB).Apply(default(TA).Apply(r.Depth));
            Next<TB>(r);
            r.Acc += 1;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static void Transform<TA, TB>(Request r) where TA : struct, IStep where TB : struct, IStep
        {
            int x = r.Seed;
            for (int i = 0; i < 16; i++)
                x = default(TA).Apply(x) + default(TB).Apply(i);
            r.Acc += x;
            Next<TB>(r);
        }
    }

    internal static class Leaves
    {
        [ThreadStatic] private static Dictionary<int, string> t_cache;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void Run(Request r, int k)
        {
            switch (k % 7)
            {
                case 0: r.Acc += SortNumbers(k); break;
                case 1: r.Acc += HashBytes(k); break;
                case 2: r.Acc += Lookup(k); break;
                case 3: r.Acc += (k & 15) == 3 ? Throw(k) : Format(k); break;
                case 4: r.Acc += Query(k); break;
                case 5: r.Acc += Spin(k); break;
                default: r.Acc += Generated.Call(k); break;
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static long SortNumbers(int k)
        {
            var a = new int[2000];
            var rnd = new Random(k);
            for (int i = 0; i < a.Length; i++)
                a[i] = rnd.Next();
            Array.Sort(a);
            return a[a.Length / 2];
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static long HashBytes(int k)
        {
            var data = new byte[16384];
            new Random(k).NextBytes(data);
            return Fnv(data);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static long Fnv(byte[] data)
        {
            ulong h = 14695981039346656037UL;
            foreach (byte b in data)
                h = (h ^ b) * 1099511628211UL;
            return (long)h;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static long Lookup(int k)
        {
            var d = t_cache ??= new Dictionary<int, string>();
            long n = 0;
            for (int i = 0; i < 3000; i++)
            {
                int key = (k + i * 7919) & 0xFFFF;
                if (!d.TryGetValue(key, out string s))
                {
                    if (d.Count > 50000)
                        d.Clear();
                    d[key] = s = key.ToString("x");
                }
                n += s.Length;
            }
            return n;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static long Format(int k)
        {
            var sb = new StringBuilder();
            for (int i = 0; i < 300; i++)
                sb.Append("item ").Append(k + i).Append(' ').Append((k * 0.37 + i).ToString("F3")).Append('\n');
            return sb.ToString().GetHashCode();
        }

        // Exceptions for the exception profile: three types, thrown and caught
        // on the request's deep stack (about one call in 112).
        [MethodImpl(MethodImplOptions.NoInlining)]
        private static long Throw(int k)
        {
            try
            {
                switch ((k >> 4) % 3)
                {
                    case 0: throw new InvalidOperationException("bench " + k);
                    case 1: throw new ArgumentException("bench", nameof(k));
                    default: throw new FormatException("bench");
                }
            }
            catch (Exception e)
            {
                return e.Message.Length;
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static long Query(int k)
        {
            return Enumerable.Range(k & 1023, 4000)
                .Where(x => (x & 3) != 0)
                .Select(x => (long)x * x)
                .GroupBy(x => x % 17)
                .Sum(g => g.Max());
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static long Spin(int k)
        {
            long acc = k;
            for (int i = 0; i < 200000; i++)
                acc = acc * 31 + (i ^ (acc >> 5));
            return acc;
        }
    }

    // New code all along: a producer compiles a fresh DynamicMethod every few
    // ms; workers call the latest.  Old ones become garbage and unload.
    internal static class Generated
    {
        private static Func<int, long> s_current = x => x;
        private static int s_made;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static long Call(int k)
        {
            long acc = 0;
            var f = Volatile.Read(ref s_current);
            for (int i = 0; i < 2000; i++)
                acc += f(k + i);
            return acc;
        }

        public static void Produce(CancellationToken stop)
        {
            while (!stop.IsCancellationRequested)
            {
                int n = Interlocked.Increment(ref s_made);
                var dm = new DynamicMethod("Generated_" + n, typeof(long), new[] { typeof(int) },
                                           typeof(Generated).Module);
                var il = dm.GetILGenerator();
                il.Emit(OpCodes.Ldarg_0);
                il.Emit(OpCodes.Conv_I8);
                for (int i = 0; i < 1 + n % 8; i++)
                {
                    il.Emit(OpCodes.Ldc_I8, (long)(n * 2654435761L + i));
                    il.Emit(i % 2 == 0 ? OpCodes.Xor : OpCodes.Add);
                }
                il.Emit(OpCodes.Ret);
                Volatile.Write(ref s_current, (Func<int, long>)dm.CreateDelegate(typeof(Func<int, long>)));
                s_current(n); // compile it now
                Thread.Sleep(5);
            }
        }
    }

    internal static class Program
    {
        private static readonly object s_lock = new object();
        private static long s_total;

        private static void Worker(object state)
        {
            var (id, stop, ready) = ((int, CancellationToken, CountdownEvent))state;
            var r = new Request();
            int seed = id * 7777 + 1;
            bool signalled = false;
            while (!stop.IsCancellationRequested)
            {
                seed = seed * 214013 + 2531011;
                r.Seed = seed;
                r.Depth = 8 + (int)((uint)seed % 33);
                r.Acc = 0;
                Walk.Next<S0>(r);
                if (!signalled)
                {
                    ready.Signal();
                    signalled = true;
                }
                if ((seed & 63) == 0)
                    lock (s_lock) // a little contention: threads now and then wait on each other
                    {
                        s_total += r.Acc;
                        Thread.SpinWait(200);
                    }
            }
        }

        private static int Main(string[] args)
        {
            int threads = args.Length > 0 ? int.Parse(args[0]) : 24;
            double seconds = args.Length > 1 ? double.Parse(args[1], System.Globalization.CultureInfo.InvariantCulture) : 0;
            var cts = new CancellationTokenSource();
            var ready = new CountdownEvent(threads);
            var all = new List<Thread>();
            for (int i = 0; i < threads; i++)
            {
                var t = new Thread(Worker) { Name = "worker-" + i, IsBackground = true };
                t.Start((i, cts.Token, ready));
                all.Add(t);
            }
            var producer = new Thread(() => Generated.Produce(cts.Token)) { Name = "producer", IsBackground = true };
            producer.Start();
            // A few threads that mostly wait, as in a service (timers, I/O).
            using var timer = new Timer(_ => { lock (s_lock) s_total++; }, null, 0, 10);
            ready.Wait();
            Console.WriteLine("ready " + Environment.ProcessId);
            Console.Out.Flush();
            if (seconds > 0)
                Thread.Sleep(TimeSpan.FromSeconds(seconds));
            else
                Thread.Sleep(Timeout.Infinite);
            cts.Cancel();
            foreach (var t in all)
                t.Join();
            producer.Join();
            Console.WriteLine("total " + s_total);
            return 0;
        }
    }
}

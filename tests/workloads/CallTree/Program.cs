// One thread walking a fixed call tree:
//   Main -> Run -> Outer -> Inner -> Leaf      (3 units of work per round)
//   Main -> Run -> Outer -> Sibling            (1 unit of work per round)
// so Leaf should hold ~75% and Sibling ~25% of the worker's samples, and
// Outer / Run ~100% inclusive.  Recorded into corpus/call-tree.nettrace.
using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace Workloads.CallTree
{
    internal static class Tree
    {
        // One unit of work: a fixed number of dependent multiply-adds.
        private const int UnitIterations = 2_000_000;
        public static long Sink;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void Run(long deadlineTicks)
        {
            while (Stopwatch.GetTimestamp() < deadlineTicks)
                Outer();
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void Outer()
        {
            Inner();
            Sibling();
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void Inner()
        {
            Leaf();
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void Leaf()
        {
            long x = Sink | 1;
            for (int i = 0; i < 3 * UnitIterations; i++)
                x = x * 6364136223846793005L + 1442695040888963407L;
            Sink = x;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void Sibling()
        {
            long x = Sink | 1;
            for (int i = 0; i < UnitIterations; i++)
                x = x * 6364136223846793005L + 1442695040888963407L;
            Sink = x;
        }
    }

    internal static class Program
    {
        private static int Main(string[] args)
        {
            int ms = args.Length > 0 ? int.Parse(args[0]) : 2000;
            long deadline = Stopwatch.GetTimestamp() + ms * Stopwatch.Frequency / 1000;
            Tree.Run(deadline);
            Console.WriteLine($"call-tree done ({ms} ms, sink {Tree.Sink & 0xff})");
            return 0;
        }
    }
}

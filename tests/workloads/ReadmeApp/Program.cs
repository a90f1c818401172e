// ReadmeApp (built as app.dll): what a user's program might do, for the test
// that runs the README's first section on it (tests/readme_first.sh).  One
// thread burns CPU in Checksum.Compute, one allocates Order objects in
// Orders.Create, one throws InvalidOperationException from Parser.Parse, and
// the main thread waits.  It runs until killed, at most 120 s.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Threading;

namespace ReadmeApp
{
    sealed class Order
    {
        public long Id;
        public byte[] Payload = new byte[256];
    }

    static class Checksum
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static long Compute(long seed)
        {
            long acc = seed;
            for (int i = 0; i < 200000; i++)
                acc = acc * 31 + (i ^ (acc >> 7));
            return acc;
        }
    }

    static class Orders
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static List<Order> Create(int n)
        {
            var list = new List<Order>();
            for (int i = 0; i < n; i++)
                list.Add(new Order { Id = i });
            return list;
        }
    }

    static class Parser
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Parse(string s)
        {
            if (s.Length > 0)
                throw new InvalidOperationException("not a number: " + s);
            return 0;
        }
    }

    static class Program
    {
        static void Loop(Action body)
        {
            var t = new Thread(() => { while (true) body(); }) { IsBackground = true };
            t.Start();
        }

        static void Main()
        {
            long sink = 0;
            Loop(() => sink += Checksum.Compute(sink));
            Loop(() => { sink += Orders.Create(1000).Count; Thread.Sleep(1); });
            Loop(() =>
            {
                try { Parser.Parse("x"); } catch (InvalidOperationException) { }
                Thread.Sleep(2);
            });
            Thread.Sleep(TimeSpan.FromSeconds(120));
            GC.KeepAlive(sink);
        }
    }
}

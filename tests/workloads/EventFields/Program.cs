// EventFields DURATION_MS: for DURATION_MS, every 20 ms, writes one event of
// each kind of Workloads-EventFields (below) and drives the runtime activity
// the runtime provider reports: allocations (GC, allocation ticks), thrown and
// caught exceptions, a contended lock, thread-pool work and awaited tasks.
// corpus/record.sh records it with `nettrace collect`.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Diagnostics.Tracing;
using System.Threading;
using System.Threading.Tasks;

namespace Workloads.EventFields
{
    public enum Color { Red = 1, Green = 2, Blue = 40000 }

    [EventData]
    public sealed class Point
    {
        public int X { get; set; }
        public double Y { get; set; }
        public string Label { get; set; } = "";
    }

    [EventData]
    public sealed class Shape
    {
        public string Name { get; set; } = "";
        public Point Origin { get; set; } = new Point();
        public Guid Id { get; set; }
    }

    // Self-describing (TraceLogging) format: EventPipe then describes array
    // and struct parameters (V5 V2Params metadata), which the manifest format
    // refuses ("Unsupported type Int32[]").
    [EventSource(Name = "Workloads-EventFields")]
    public sealed class FieldSource : EventSource
    {
        public static readonly FieldSource Log = new FieldSource();

        private FieldSource() : base(EventSourceSettings.EtwSelfDescribingEventFormat) { }

        // One parameter per field type.
        [Event(1)]
        public void Integers(sbyte i8, byte u8, short i16, ushort u16, int i32, uint u32, long i64, ulong u64) =>
            WriteEvent(1, i8, u8, i16, u16, i32, u32, i64, u64);

        // A bool last: the self-describing format writes it as one byte while
        // EventPipe's metadata calls it Boolean (four bytes), so no reader can
        // decode it (README of tests/conformance: bool8-as-bool32).
        [Event(2)]
        public void Reals(float single, double dbl, char ch, Color color, bool flag) =>
            WriteEvent(2, single, dbl, ch, color, flag);

        [Event(3)]
        public void Texts(string plain, string quoted, string control, string loneSurrogate, string empty) =>
            WriteEvent(3, plain, quoted, control, loneSurrogate, empty);

        [Event(4)]
        public void Identity(Guid id, DateTime when, IntPtr handle) => WriteEvent(4, id, when, handle);

        // Arrays of primitives, and a list of structs (a Point[] has no EventPipe
        // type; a List<Point> is an enumerable of structs, which V2Params describes).
        [Event(5)]
        public void Arrays(int[] numbers, double[] reals, string tag) => WriteEvent(5, numbers, reals, tag);

        [Event(9)]
        public void Polygon(string name, List<Point> corners, Shape shape) => WriteEvent(9, name, corners, shape);

        // A byte[] parameter: EventPipe's metadata generator has no type for it,
        // so the event is described without fields (its payload stays raw).
        [Event(6)]
        public void Blob(byte[] data, int after) => WriteEvent(6, data, after);

        [Event(7, Opcode = EventOpcode.Start)]
        public void WorkStart(int item) => WriteEvent(7, item);

        [Event(8, Opcode = EventOpcode.Stop)]
        public void WorkStop(long item, long elapsedTicks) => WriteEvent(8, item, elapsedTicks);
    }

    internal static class Program
    {
        private static readonly object Gate = new object();
        private static long sink;

        private static int Main(string[] args)
        {
            int durationMs = args.Length > 0 ? int.Parse(args[0]) : 2000;
            var log = FieldSource.Log;
            if (log.ConstructionException != null)
                Console.Error.WriteLine("EventFields: " + log.ConstructionException.Message);
            var stop = Stopwatch.StartNew();
            var contender = new Thread(() => Contend(stop, durationMs)) { Name = "contender", IsBackground = true };
            contender.Start();
            int round = 0;
            while (stop.ElapsedMilliseconds < durationMs)
            {
                round++;
                log.Integers(-5, 250, -30000, 60000, -2000000000, 4000000000, long.MinValue + round, ulong.MaxValue - (ulong)round);
                log.Reals(1.5f, Math.PI * round, 'é', Color.Blue, round % 2 == 0);
                log.Texts("plain " + round, "say \"hi\" \\ back", "tab\tnew\nline\u0001end", "lone\uD800x", "");
                log.Identity(new Guid(round, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11), new DateTime(2024, 2, 29, 12, 34, 56, DateTimeKind.Utc).AddTicks(round), new IntPtr(0x1234 + round));
                log.Arrays(new[] { round, -round, int.MaxValue }, new[] { 0.25, -1e300 }, "arr");
                log.Blob(new byte[] { 0, 1, 2, 0xFF }, round);
                log.WorkStart(round);
                var corners = new List<Point> { new Point { X = 1, Y = 2, Label = "a" }, new Point { X = round, Y = -4, Label = "b\"" } };
                log.Polygon("tri", corners, new Shape { Name = "square", Origin = new Point { X = round, Y = 0.5, Label = "o" }, Id = Guid.Empty });
                // Write<T>: the payload is T's properties (an unnamed top-level struct).
                log.Write("Shape", new Shape { Name = "square", Origin = new Point { X = round, Y = 0.5, Label = "o" }, Id = new Guid(round, 0, 0, new byte[8]) });
                Churn(round);
                log.WorkStop(round, stop.ElapsedTicks);
                Thread.Sleep(20);
            }
            contender.Join();
            return (int)(sink & 1);
        }

        // Allocation (GC and allocation ticks), a thrown and caught exception,
        // thread-pool work and awaited tasks (TplEventSource).
        private static void Churn(int round)
        {
            var keep = new List<byte[]>();
            for (int i = 0; i < 200; i++)
                keep.Add(new byte[1024 + i]);
            sink += keep.Count;
            try
            {
                if (round > 0)
                    throw new InvalidOperationException("round " + round + " \"failed\"");
            }
            catch (InvalidOperationException e)
            {
                sink += e.Message.Length;
            }
            Task<int> t = Task.Run(async () =>
            {
                await Task.Yield();
                return round * 2;
            });
            sink += t.GetAwaiter().GetResult();
            lock (Gate)
                Thread.SpinWait(20000);
            if (round % 25 == 0)
                GC.Collect(1);
        }

        // Holds the lock long enough that the main thread contends for it.
        private static void Contend(Stopwatch stop, int durationMs)
        {
            while (stop.ElapsedMilliseconds < durationMs)
            {
                lock (Gate)
                    Thread.Sleep(5);
                Thread.Sleep(15);
            }
        }
    }
}

// A heap of known shape, held until stdin closes (or for MS milliseconds):
//   HeapShape [SCALE [MS]]
//   HeapShape.Item         1,000 x SCALE objects of 24 bytes, in one Item[] (24 + 8 per item bytes) held
//                          by a static
//   HeapShape.ListNode     a linked list of 500 x SCALE nodes of 32 bytes, its head held by a static
//   HeapShape.CycleA/B     two objects of 24 bytes referencing each other, A held by a static
//   HeapShape.CwtValue     one object of 32 bytes reachable only as a ConditionalWeakTable value
//                          (its key, a CwtKey of 24 bytes, is held by a static)
//   System.Byte[]          one array of 100,000 bytes (100,024 bytes, on the large object heap)
// Prints "ready PID" when the heap is built.
using System;
using System.Runtime.CompilerServices;
using System.Threading;

namespace HeapShape
{
    sealed class Item { public int Value; }
    sealed class ListNode { public ListNode? Next; public long Value; }
    sealed class CycleA { public CycleB? B; }
    sealed class CycleB { public CycleA? A; }
    sealed class CwtKey { public int K; }
    sealed class CwtValue { public long V; public long W; }

    static class Holder
    {
        public static Item[] Items = Array.Empty<Item>();
        public static ListNode? Head;
        public static CycleA? Cycle;
        public static CwtKey? Key;
        public static readonly ConditionalWeakTable<CwtKey, CwtValue> Table = new();
        public static byte[] Big = Array.Empty<byte>();
    }

    static class Program
    {
        static void Build(int scale)
        {
            Holder.Items = new Item[1000 * scale];
            for (int i = 0; i < Holder.Items.Length; i++)
                Holder.Items[i] = new Item { Value = i };
            ListNode? head = null;
            for (int i = 0; i < 500 * scale; i++)
                head = new ListNode { Next = head, Value = i };
            Holder.Head = head;
            var a = new CycleA();
            a.B = new CycleB { A = a };
            Holder.Cycle = a;
            Holder.Key = new CwtKey { K = 1 };
            Holder.Table.Add(Holder.Key, new CwtValue { V = 2, W = 3 });
            Holder.Big = new byte[100_000];
        }

        static int Main(string[] args)
        {
            int scale = args.Length > 0 && int.TryParse(args[0], out int s) && s > 0 ? s : 1;
            Build(scale);
            GC.Collect();
            Console.WriteLine("ready " + Environment.ProcessId);
            Console.Out.Flush();
            if (args.Length > 1 && int.TryParse(args[1], out int ms))
                Thread.Sleep(ms);
            else
                Console.In.ReadToEnd();
            GC.KeepAlive(Holder.Items);
            return 0;
        }
    }
}

// The live soak's churning service: every round it compiles and drops a few
// dynamic methods and a RegexOptions.Compiled regex of a new pattern, walks
// one of thousands of stack shapes (a recursion whose depth and branch pattern
// vary), and every 200 rounds loads its own assembly into a collectible
// AssemblyLoadContext, runs code there and unloads it.  Args: seconds to run
// (default: until killed).
using System;
using System.Reflection;
using System.Reflection.Emit;
using System.Runtime.CompilerServices;
using System.Runtime.Loader;
using System.Text.RegularExpressions;
using System.Threading;

public static class Churn
{
    static long sink;

    [MethodImpl(MethodImplOptions.NoInlining)]
    static long A(int depth, int pattern) => depth == 0 ? Leaf(pattern) : ((pattern >> (depth & 15)) & 1) == 0 ? A(depth - 1, pattern) + 1 : B(depth - 1, pattern) + 2;

    [MethodImpl(MethodImplOptions.NoInlining)]
    static long B(int depth, int pattern) => depth == 0 ? Leaf(pattern) : ((pattern >> (depth & 15)) & 1) == 0 ? A(depth - 1, pattern) + 3 : B(depth - 1, pattern) + 4;

    [MethodImpl(MethodImplOptions.NoInlining)]
    static long Leaf(int pattern)
    {
        long x = pattern;
        for (int i = 0; i < 20000; i++)
            x = x * 6364136223846793005L + 1442695040888963407L;
        return x;
    }

    static long DynamicRound(int round)
    {
        var dm = new DynamicMethod("Dyn" + round, typeof(long), new[] { typeof(long) }, typeof(Churn).Module);
        var il = dm.GetILGenerator();
        il.Emit(OpCodes.Ldarg_0);
        il.Emit(OpCodes.Ldc_I8, (long)round);
        il.Emit(OpCodes.Mul);
        il.Emit(OpCodes.Ret);
        var f = (Func<long, long>)dm.CreateDelegate(typeof(Func<long, long>));
        return f(round);
    }

    public static long PluginWork(int n)
    {
        long s = 0;
        for (int i = 0; i < n; i++)
            s += A(i % 12, i * 7919);
        return s;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void PluginRound()
    {
        var alc = new AssemblyLoadContext("plugin", isCollectible: true);
        Assembly a = alc.LoadFromAssemblyPath(typeof(Churn).Assembly.Location);
        var m = a.GetType("Churn").GetMethod("PluginWork");
        sink += (long)m.Invoke(null, new object[] { 20 });
        alc.Unload();
    }

    public static void Main(string[] args)
    {
        double seconds = args.Length > 0 ? double.Parse(args[0]) : double.MaxValue;
        var rnd = new Random(1);
        var start = DateTime.UtcNow;
        Console.WriteLine("ready");
        for (int round = 0; (DateTime.UtcNow - start).TotalSeconds < seconds; round++)
        {
            sink += DynamicRound(round);
            if (round % 4 == 0)
                sink += new Regex("^a" + round + "[b-z]+$", RegexOptions.Compiled).IsMatch("a" + round + "bcd") ? 1 : 0;
            for (int k = 0; k < 4; k++)
                sink += A(rnd.Next(2, 24), rnd.Next());
            if (round % 200 == 0)
            {
                PluginRound();
                GC.Collect();
                GC.WaitForPendingFinalizers();
            }
            if (round % 50 == 0)
                Thread.Sleep(1);
        }
        Console.WriteLine(sink);
    }
}

using System;
using System.Collections.Generic;
using System.Linq;
using System.Reflection;
using System.Runtime.InteropServices;
using System.Text;
using Xunit;

namespace LibNetTrace.Tests;

public class AbiTests
{
    /// <summary>Every structure of LibNetTrace.Native has the size and field
    /// offsets the C compiler gives the header's (bindings/python/abi_layout).</summary>
    [SkippableFact]
    public void StructuresAreLaidOutAsTheHeaders()
    {
        string tool = Env.Get("NETTRACE_ABI_LAYOUT") ?? throw new SkipException("NETTRACE_ABI_LAYOUT is not set (make check builds bindings/python/abi_layout)");
        var c = new Dictionary<string, long>();
        foreach (string line in Encoding.UTF8.GetString(Env.Run(tool).Stdout).Split('\n', StringSplitOptions.RemoveEmptyEntries))
        {
            string[] kv = line.Split(' ');
            c[kv[0]] = long.Parse(kv[1]);
        }
        Type[] mirrored = typeof(TraceFile).Assembly.GetTypes()
            .Where(t => t.Namespace == "LibNetTrace.Native" && t.Name.StartsWith("nt_") && t.IsValueType && t.Name != "nt_field_union")
            .ToArray();
        Assert.True(mirrored.Length >= 30, "only " + mirrored.Length + " structures found");
        foreach (Type t in mirrored)
        {
            Assert.True(c.ContainsKey(t.Name), "abi_layout does not list " + t.Name);
            Assert.True(c[t.Name] == Marshal.SizeOf(t), "sizeof(" + t.Name + "): C " + c[t.Name] + ", C# " + Marshal.SizeOf(t));
            foreach (FieldInfo f in t.GetFields(BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic))
            {
                string key = t.Name + "." + f.Name;
                Assert.True(c.ContainsKey(key), "abi_layout does not list " + key);
                long off = Marshal.OffsetOf(t, f.Name);
                Assert.True(c[key] == off, "offsetof(" + key + "): C " + c[key] + ", C# " + off);
            }
        }
        // The value union: 16 bytes at nt_field_value.v.
        Assert.Equal(16, Marshal.SizeOf<Native.nt_field_union>());
    }
}

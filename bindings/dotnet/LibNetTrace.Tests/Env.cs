using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Text;
using Xunit;

// One test at a time: the live tests time windows of a real session, and the
// corpus and misuse tests running beside them on a small machine (make check
// already runs other tests in parallel) can make those windows late.
[assembly: CollectionBehavior(DisableTestParallelization = true)]

namespace LibNetTrace.Tests;

/// <summary>What dotnet_test.sh hands the tests: the build tree's tool, the
/// corpus folders, the live target.  A test that needs what is absent skips,
/// saying why.</summary>
internal static class Env
{
    internal static string? Get(string name) =>
        Environment.GetEnvironmentVariable(name) is { Length: > 0 } v ? v : null;

    internal static string Cli => Get("NETTRACE_CLI") ?? throw new SkipException("NETTRACE_CLI is not set (dotnet_test.sh sets it)");

    internal static string SrcDir => Get("NETTRACE_SRCDIR") ?? throw new SkipException("NETTRACE_SRCDIR is not set");

    internal static string Corpus(string name) => Path.Combine(SrcDir, "corpus", name);

    /// <summary>The traces the CLI comparisons run on: corpus/ and the shared corpus when present.</summary>
    public static IEnumerable<object[]> Traces()
    {
        string? src = Get("NETTRACE_SRCDIR");
        if (src == null)
            yield break;
        foreach (string f in Directory.GetFiles(Path.Combine(src, "corpus"), "*.nettrace"))
            yield return new object[] { f };
        string? shared = Get("NETTRACE_SHARED_CORPUS");
        if (shared != null && Directory.Exists(shared))
            foreach (string f in Directory.GetFiles(shared, "*.nettrace"))
                yield return new object[] { f };
    }

    /// <summary>Run the tool; its stdout as bytes, exit status and stderr beside.</summary>
    internal static (byte[] Stdout, int Exit, string Stderr) Run(string exe, params string[] args)
    {
        var psi = new ProcessStartInfo(exe) { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        foreach (string a in args)
            psi.ArgumentList.Add(a);
        // The tool may be built with AddressSanitizer: leaks of a short command are not this test's subject.
        psi.Environment["ASAN_OPTIONS"] = "detect_leaks=0";
        using var p = Process.Start(psi)!;
        var err = p.StandardError.ReadToEndAsync();
        using var ms = new MemoryStream();
        p.StandardOutput.BaseStream.CopyTo(ms);
        p.WaitForExit();
        return (ms.ToArray(), p.ExitCode, err.Result);
    }

    internal static byte[] CliOut(params string[] args)
    {
        var (o, code, e) = Run(Cli, args);
        Assert.True(code == 0, "nettrace " + string.Join(' ', args) + " exited " + code + ": " + e);
        return o;
    }

    /// <summary>The samples line's escaping of names (common/text_escape.c with the
    /// separators ';' and ' '): controls, DEL, C1 controls, bytes of no valid UTF-8
    /// sequence and the separators as \xHH.  Test-only: the package hands out names unescaped.</summary>
    internal static string EscapeSamples(string name)
    {
        var sb = new StringBuilder();
        Span<byte> b = stackalloc byte[4];
        foreach (Rune r in name.EnumerateRunes())
        {
            int c = r.Value;
            if (c < 0x20 || c == 0x7F || (c >= 0x80 && c <= 0x9F) || c == ';' || c == ' ')
            {
                int n = r.EncodeToUtf8(b);
                for (int i = 0; i < n; i++)
                    sb.Append("\\x").Append(b[i].ToString("X2"));
            }
            else
                sb.Append(r.ToString());
        }
        return sb.ToString();
    }
}

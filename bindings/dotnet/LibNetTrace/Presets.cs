using System;
using System.Collections.Generic;

namespace LibNetTrace;

/// <summary>An event provider to enable in a session.</summary>
/// <param name="Name">The provider's name.</param>
/// <param name="Keywords">Its keywords.</param>
/// <param name="Level">Verbosity; 0 selects 5 (verbose), which method-load events need.</param>
/// <param name="Arguments">Filter data as "key=value;..." or null.</param>
public sealed record Provider(string Name, ulong Keywords = 0, int Level = 0, string? Arguments = null);

/// <summary>The project's profile presets: what each profile asks the runtime
/// for, the table of <c>nettrace collect --profile</c> (src/cli/profile_presets.c;
/// a test compares this copy with the one the tool prints).</summary>
public static class ProfilePresets
{
    private const string Runtime = "Microsoft-Windows-DotNETRuntime";
    private const string Sampler = "Microsoft-DotNETCore-SampleProfiler";
    private const ulong Gc = 0x1, Names = 0x18, Contention = 0x4000, Exception = 0x8000;

    /// <summary>Each profile's providers, one row per provider.</summary>
    public static IReadOnlyList<(string Profile, Provider Provider)> Table { get; } = new (string, Provider)[]
    {
        ("cpu", new Provider(Sampler, 0, 5)),
        ("cpu", new Provider(Runtime, Names, 5)),
        ("wall", new Provider(Sampler, 0, 5)),
        ("wall", new Provider(Runtime, Names, 5)),
        ("alloc", new Provider(Runtime, Gc | Names, 5)),
        ("exceptions", new Provider(Runtime, Exception | Names, 5)),
        ("contention", new Provider(Runtime, Contention | Names, 5)),
        ("gc", new Provider(Runtime, Gc, 4)),
    };

    /// <summary>The providers of "NAME[,NAME]" (cpu, wall, alloc, exceptions,
    /// contention, gc): a provider named twice gets the union of the keywords and
    /// the higher level.  ArgumentException for an unknown name.</summary>
    public static IReadOnlyList<Provider> Providers(string profiles)
    {
        ArgumentNullException.ThrowIfNull(profiles);
        var list = new List<Provider>();
        foreach (string name in profiles.Split(','))
        {
            bool found = false;
            foreach ((string profile, Provider p) in Table)
            {
                if (profile != name)
                    continue;
                found = true;
                int i = list.FindIndex(q => q.Name == p.Name);
                if (i < 0)
                    list.Add(p);
                else
                    list[i] = list[i] with { Keywords = list[i].Keywords | p.Keywords, Level = Math.Max(list[i].Level == 0 ? 5 : list[i].Level, p.Level) };
            }
            if (!found)
                throw new ArgumentException("unknown profile '" + name + "' (cpu, wall, alloc, exceptions, contention, gc)", nameof(profiles));
        }
        return list;
    }
}

using System.Text.RegularExpressions;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// Every program of the user guide (docs/guide/*.md, the ```csharp blocks) runs on 2 ranks in
/// library mode and under motor, and prints every line of the output the guide shows after it.
/// build.sh turns the blocks into projects (docs/guide/examples.sh) and builds them with the rest.
/// </summary>
public class GuideTests
{
    private static readonly string Examples = Path.Combine(Job.Root, "artifacts", "guide");

    /// <summary>The guide's programs (name, chapter, line), as examples.sh listed them at the last build.</summary>
    public static TheoryData<string, bool> Programs()
    {
        var data = new TheoryData<string, bool>();
        foreach (string line in File.ReadAllLines(Path.Combine(Examples, "examples.tsv")))
        {
            string name = line.Split('\t')[0];
            data.Add(name, false);
            data.Add(name, true);
        }
        return data;
    }

    [Fact]
    public void EveryProgramInTheGuideIsBuilt()
    {
        int fences = Directory.GetFiles(Path.Combine(Job.Root, "docs", "guide"), "*.md")
            .Sum(md => File.ReadAllLines(md).Count(l => Regex.IsMatch(l, @"^```csharp\s*$")));
        string[] listed = File.ReadAllLines(Path.Combine(Examples, "examples.tsv"));
        Assert.True(fences >= 10, $"the guide has {fences} programs");
        Assert.Equal(fences, listed.Length);
        foreach (string line in listed)
        {
            string name = line.Split('\t')[0];
            Assert.True(File.Exists(Job.ManagedProgram(name)), $"{name} is not built ({line})");
        }
    }

    [Theory]
    [MemberData(nameof(Programs))]
    public void RunsOnTwoRanksAndPrintsWhatTheGuideShows(string name, bool hosted)
    {
        Job.Result r = Job.Mpi(2, Job.ManagedProgram(name), hosted: hosted);
        Assert.True(r.ExitCode == 0, $"{name}: {r}");
        string expected = Path.Combine(Examples, name, "expected.txt");
        if (!File.Exists(expected))
            return;
        var printed = r.Output.Split('\n').Select(l => l.Trim()).ToHashSet();
        foreach (string line in File.ReadAllLines(expected).Select(l => l.Trim()).Where(l => l.Length > 0))
            Assert.True(printed.Contains(line), $"{name} does not print \"{line}\" as the guide shows:\n{r}");
    }
}

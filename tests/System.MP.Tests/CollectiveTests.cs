using Xunit;

namespace System.MP.Tests;

/// <summary>Every buffer collective, groups and Cartesian topologies on 1, 2, 3 and 4 ranks, checking actual values.</summary>
public class CollectiveTests
{
    public static TheoryData<string, int> Scenarios()
    {
        var data = new TheoryData<string, int>();
        foreach (string name in new[] { "coll-reduce", "coll-move", "coll-vector", "coll-userop", "coll-nonblocking", "coll-bad-args", "groups", "cartesian" })
            for (int ranks = 1; ranks <= 4; ranks++)
                data.Add(name, ranks);
        return data;
    }

    [Theory]
    [MemberData(nameof(Scenarios))]
    public void Scenario(string name, int ranks)
    {
        Job.Result r = Job.Scenario(name, ranks);
        Assert.DoesNotContain("leaked", r.Output); // MPI objects are freed before finalize
    }
}

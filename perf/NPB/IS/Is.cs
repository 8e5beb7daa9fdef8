using System.MP;
using Npb.Common;

namespace Npb.IS;

/// <summary>
/// IS, integer sort (RNR-94-007 §2.4; the MPI bucket version of NPB 2/3): N keys in [0, Bmax)
/// made from sums of four NPB uniforms are ranked ten times. Each iteration counts the
/// local keys per bucket, sums the counts over ranks, gives every rank a contiguous run of
/// buckets holding about N/p keys, moves the keys there with Alltoallv, and ranks them by a
/// counting sort of the rank's key range. Partial verification checks five keys' ranks each
/// iteration against NPB's table; full verification sorts the last ranking and checks the
/// order across ranks.
/// </summary>
public static class Is
{
    private const int Iterations = 10;
    private const int TestKeys = 5;
    private const double Seed = 314159265;

    private sealed record Parameters(int KeysLog, int MaxKeyLog, int BucketsLog, int MaxProcesses,
        int[] TestIndex, int[] TestRank, Func<int, int, int> RankShift);

    // RankShift(i, iteration): how test key i's rank moves with the iteration, because each
    // iteration plants two keys (the iteration number and Bmax - iteration) in rank 0's array.
    private static readonly ClassTable<Parameters> Classes = new("IS",
        ('S', new(16, 11, 9, 128, [48427, 17148, 23627, 62548, 4431], [0, 18, 346, 64917, 65463],
            (i, it) => i <= 2 ? it : -it)),
        ('W', new(20, 16, 10, 1024, [357773, 934767, 875723, 898999, 404505], [1249, 11698, 1039987, 1043896, 1048018],
            (i, it) => i < 2 ? it - 2 : -it)),
        ('A', new(23, 19, 10, 1024, [2112377, 662041, 5336171, 3642833, 4250760], [104, 17523, 123928, 8288932, 8388264],
            (i, it) => i <= 2 ? it - 1 : -(it - 1))),
        ('B', new(25, 21, 10, 1024, [41869, 812306, 5102857, 18232239, 26860214], [33422937, 10244, 59149, 33135281, 99],
            (i, it) => i == 1 || i == 2 || i == 4 ? it : -it)),
        ('C', new(27, 23, 10, 1024, [44172927, 72999161, 74326391, 129606274, 21736814], [61147, 882988, 266290, 133997595, 133525895],
            (i, it) => i <= 2 ? it : -it)));

    private enum T { Total, Rank, Communication, Verify }

    /// <summary>Runs class <paramref name="problemClass"/> on <paramref name="world"/>; returns the exit code.</summary>
    public static int Run(Communicator world, char problemClass)
    {
        Parameters p = Classes[problemClass];
        if (!ActiveProcesses.PowerOfTwo(ref world, "IS", p.MaxProcesses))
            return 0;
        int size = world.Size;
        var sort = new Sorter(world, p);

        Report.Banner(world, "IS Benchmark",
            FormattableString.Invariant($" Size:  {1L << p.KeysLog}  (class {problemClass})"),
            FormattableString.Invariant($" Iterations:   {Iterations}"));

        sort.Generate();
        sort.Rank(1, null);        // untimed: touches every page and compiles every path
        sort.Passed = 0;

        var timers = sort.Timers;
        timers.ClearAll();
        world.Barrier();
        timers.Start((int)T.Total);
        for (int iteration = 1; iteration <= Iterations; iteration++)
            sort.Rank(iteration, timers);
        timers.Stop((int)T.Total);
        double seconds = world.Allreduce(timers.Read((int)T.Total), Op.Max);

        timers.Start((int)T.Verify);
        sort.FullVerify();
        timers.Stop((int)T.Verify);
        int passed = world.Allreduce(sort.Passed, Op.Sum);
        if (Timers.Detailed)
            timers.PrintSummary(world);
        return new Report
        {
            Name = "IS",
            Class = problemClass,
            Size = Report.Size1(1L << p.KeysLog),
            Iterations = Iterations,
            Seconds = seconds,
            Mops = (double)Iterations * (1L << p.KeysLog) / seconds / 1e6,
            OperationType = "keys ranked",
            Verified = passed == TestKeys * Iterations + size,
            Processes = size,
        }.Finish(world);
    }

    /// <summary>One rank's keys and buffers; nothing is allocated once ranking starts.</summary>
    private sealed class Sorter
    {
        private readonly Communicator _world;
        private readonly Parameters _p;
        private readonly int _rank, _size, _keys, _buckets, _shift, _maxKey;
        private readonly int[] _keyArray;        // this rank's keys
        private int[] _bucketed;                 // the keys grouped by bucket, for Alltoallv
        private int[] _received;                 // the keys of this rank's buckets, from every rank
        private readonly int[] _population;      // per key of this rank's range: count, then inclusive prefix sum
        private readonly int[] _bucketSize;      // per bucket, then the five test keys' values
        private readonly int[] _bucketTotals;
        private readonly int[] _bucketStart;
        private readonly int[] _sendCounts, _sendDispls, _recvCounts, _recvDispls;
        private readonly int[] _firstBucket, _lastBucket;
        private int _receivedCount, _minKey, _maxKeyOfRank;

        public int Passed;
        public readonly Timers Timers = new("total", "rcomp", "rcomm", "verify");

        public Sorter(Communicator world, Parameters p)
        {
            _world = world;
            _p = p;
            _rank = world.Rank;
            _size = world.Size;
            _keys = (1 << p.KeysLog) / _size;
            _buckets = 1 << p.BucketsLog;
            _shift = p.MaxKeyLog - p.BucketsLog;
            _maxKey = 1 << p.MaxKeyLog;
            _keyArray = new int[_keys];
            _bucketed = new int[_keys];
            _received = new int[3 * _keys / 2];
            _population = new int[_maxKey];
            _bucketSize = new int[_buckets + TestKeys];
            _bucketTotals = new int[_buckets + TestKeys];
            _bucketStart = new int[_buckets];
            _sendCounts = new int[_size];
            _sendDispls = new int[_size];
            _recvCounts = new int[_size];
            _recvDispls = new int[_size];
            _firstBucket = new int[_size];
            _lastBucket = new int[_size];
        }

        /// <summary>
        /// The keys: key j of the whole sequence is ⌊(Bmax/4)·(r(4j) + r(4j+1) + r(4j+2) + r(4j+3))⌋
        /// for the NPB uniforms r; this rank holds keys [rank·n, (rank+1)·n), so its
        /// generator starts 4·rank·n places into the sequence.
        /// </summary>
        public void Generate()
        {
            const ulong a = (ulong)Random46.A;
            ulong state = (ulong)Seed * (ulong)Random46.Power(Random46.A, 4L * _rank * _keys) & Random46.Mask;
            double scale = _maxKey / 4;
            int[] keys = _keyArray;
            for (int i = 0; i < keys.Length; i++)
            {
                state = state * a & Random46.Mask;
                double x = (long)state * Random46.R46;
                state = state * a & Random46.Mask;
                x += (long)state * Random46.R46;
                state = state * a & Random46.Mask;
                x += (long)state * Random46.R46;
                state = state * a & Random46.Mask;
                x += (long)state * Random46.R46;
                keys[i] = (int)(scale * x);
            }
        }

        /// <summary>One ranking of all keys (iteration numbers from 1); counts passed partial checks.</summary>
        public unsafe void Rank(int iteration, Timers? timers)
        {
            timers?.Start((int)T.Rank);
            if (_rank == 0)
            {
                _keyArray[iteration] = iteration;
                _keyArray[iteration + Iterations] = _maxKey - iteration;
            }

            Array.Clear(_bucketSize);
            for (int i = 0; i < TestKeys; i++)
            {
                int index = _p.TestIndex[i];
                if (index / _keys == _rank)
                    _bucketSize[_buckets + i] = _keyArray[index % _keys];
            }

            // Pointer-stepped loops with unsigned keys: an int index or a signed key costs a
            // sign extension per access, and these loops are IS's time.
            int shift = _shift;
            fixed (int* keyArray = _keyArray, sizeArray = _bucketSize, startArray = _bucketStart, bucketArray = _bucketed)
            {
                uint* keys = (uint*)keyArray, end = keys + _keys;
                int* sizes = sizeArray, start = startArray;
                uint* bucketed = (uint*)bucketArray;
                for (uint* k = keys; k < end; k++)
                    sizes[*k >> shift]++;
                int sum = 0;
                for (int b = 0; b < _buckets; b++)
                {
                    start[b] = sum;
                    sum += sizes[b];
                }
                for (uint* k = keys; k < end; k++)
                {
                    uint key = *k;
                    int* next = start + (key >> shift);
                    uint at = (uint)*next;
                    *next = (int)at + 1;
                    bucketed[at] = key;
                }
            }
            timers?.Stop((int)T.Rank);

            timers?.Start((int)T.Communication);
            _world.Allreduce(_bucketSize, _bucketTotals, Op.Sum);
            timers?.Stop((int)T.Communication);

            timers?.Start((int)T.Rank);
            AssignBuckets();
            timers?.Stop((int)T.Rank);

            timers?.Start((int)T.Communication);
            _world.Alltoall(_sendCounts, _recvCounts);
            int total = 0;
            for (int r = 0; r < _size; r++)
            {
                _recvDispls[r] = total;
                total += _recvCounts[r];
            }
            if (total > _received.Length)
                _received = new int[total];
            _receivedCount = total;
            _world.Alltoallv(_bucketed, _sendCounts, _sendDispls, _received, _recvCounts, _recvDispls);
            timers?.Stop((int)T.Communication);

            timers?.Start((int)T.Rank);
            CountAndCheck(iteration);
            timers?.Stop((int)T.Rank);
        }

        /// <summary>
        /// Gives rank j the buckets after which the running total of all ranks' keys first reaches
        /// (j+1)·n, so every rank ranks about n keys; sets this rank's send counts to match.
        /// </summary>
        private void AssignBuckets()
        {
            long allKeys = 0;
            int local = 0, j = 0;
            _sendDispls[0] = 0;
            _firstBucket[0] = 0;
            for (int b = 0; b < _buckets; b++)
            {
                allKeys += _bucketTotals[b];
                local += _bucketSize[b];
                if (allKeys >= (long)(j + 1) * _keys)
                {
                    _sendCounts[j] = local;
                    if (j != 0)
                    {
                        _sendDispls[j] = _sendDispls[j - 1] + _sendCounts[j - 1];
                        _firstBucket[j] = _lastBucket[j - 1] + 1;
                    }
                    _lastBucket[j++] = b;
                    local = 0;
                }
            }
            // Ranks left without buckets (possible when p nears the bucket count) get an empty range.
            for (; j < _size; j++)
            {
                _sendCounts[j] = 0;
                _sendDispls[j] = j == 0 ? 0 : _sendDispls[j - 1] + _sendCounts[j - 1];
                _firstBucket[j] = 1;
                _lastBucket[j] = 0;
            }
        }

        /// <summary>
        /// Counts the received keys per key value over this rank's range, turns the counts into
        /// inclusive prefix sums (the number of local keys ≤ each value), and checks the test keys
        /// whose value falls in the range: their rank is the keys below them on lower ranks plus
        /// the local keys below them.
        /// </summary>
        private unsafe void CountAndCheck(int iteration)
        {
            _minKey = _firstBucket[_rank] << _shift;
            _maxKeyOfRank = ((_lastBucket[_rank] + 1) << _shift) - 1;
            int range = _maxKeyOfRank - _minKey + 1;
            long lesser = 0;
            for (int r = 0; r < _rank; r++)
            {
                for (int b = _firstBucket[r]; b <= _lastBucket[r]; b++)
                    lesser += _bucketTotals[b];
            }

            if (range > 0)
            {
                fixed (int* populationArray = _population, receivedArray = _received)
                {
                    int* population = populationArray, populationEnd = population + range;
                    new Span<int>(population, range).Clear();
                    int* counts = population - _minKey;
                    uint* received = (uint*)receivedArray, end = received + _receivedCount;
                    for (uint* key = received; key < end; key++)
                        counts[*key]++;
                    int running = 0;
                    for (int* q = population; q < populationEnd; q++)
                    {
                        running += *q;
                        *q = running;
                    }
                }
            }

            for (int i = 0; i < TestKeys; i++)
            {
                int key = _bucketTotals[_buckets + i];
                if (key < _minKey || key > _maxKeyOfRank)
                    continue;
                long keyRank = lesser + (key > _minKey ? _population[key - 1 - _minKey] : 0);
                long expected = _p.TestRank[i] + _p.RankShift(i, iteration);
                if (keyRank == expected)
                    Passed++;
                else
                    Console.WriteLine(FormattableString.Invariant(
                        $"Failed partial verification: iteration {iteration}, processor {_rank}, test key {i}, key rank {keyRank}"));
            }
        }

        /// <summary>
        /// Sorts this rank's received keys by the last ranking (each key goes to the slot its
        /// prefix count names), then checks they are in order and that the previous rank's
        /// largest key is not above this rank's smallest.
        /// </summary>
        public unsafe void FullVerify()
        {
            int n = _receivedCount;
            int[] sorted = _keyArray.Length >= n ? _keyArray : new int[n];
            fixed (int* sortedArray = sorted, populationArray = _population, receivedArray = _received)
            {
                int* into = sortedArray, slots = populationArray - _minKey;
                uint* received = (uint*)receivedArray, end = received + n;
                for (uint* key = received; key < end; key++)
                    into[--slots[*key]] = (int)*key;
            }

            // Each rank's largest key goes to the next rank (a rank with no keys sends 0, which
            // is never above anyone's smallest).
            int[] last = [n > 0 ? sorted[n - 1] : 0];
            int[] previous = [0];
            Request? pending = _rank > 0 ? _world.IRecv(previous, _rank - 1, 1000) : null;
            if (_rank < _size - 1)
                _world.Send(last.AsSpan(), _rank + 1, 1000);
            pending?.Wait();

            int outOfOrder = 0;
            if (_rank > 0 && n > 0 && previous[0] > sorted[0])
                outOfOrder++;
            for (int i = 1; i < n; i++)
            {
                if (sorted[i - 1] > sorted[i])
                    outOfOrder++;
            }
            if (outOfOrder != 0)
                Console.WriteLine(FormattableString.Invariant($"Processor {_rank}:  Full_verify: number of keys out of sort: {outOfOrder}"));
            else
                Passed++;
        }
    }
}

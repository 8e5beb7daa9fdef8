using Partition = Npb.Multipartition.MultiPartition<Npb.BT.Cell>;
using System.MP;
using static Npb.BT.Flow;
using static Npb.Common.Gas;

namespace Npb.BT;

/// <summary>
/// BT-IO's "full" subtype over MPI-IO: every few steps the whole solution u is appended to
/// one file with collective writes, and at the end it is read back, dump by dump, to verify
/// it. The file is NPB's: the dumps one after another, each the n³ grid in Fortran order
/// (the five variables of a point together, then x, then y, then z), 40·n³ bytes a dump.
/// </summary>
/// <remarks>
/// NPB builds one subarray filetype per rank for this; System.MP's views are a block and a
/// stride, so each cell gets a view whose blocks are its rows of the grid (x-extent·5
/// doubles every n·5 doubles, starting at the cell's first point in the dump), and each
/// z-plane of the cell is one collective write at the offset of its first row. In the
/// multi-partition every rank has exactly one cell in each z-slab of cells, so the k-th write
/// of a slab writes one whole plane of the grid between all ranks: contiguous in the file.
/// </remarks>
internal sealed class SolutionFile : IDisposable
{
    /// <summary>The file NPB's full subtype writes, in the working directory.</summary>
    public const string DefaultPath = "btio.full.out";

    private readonly Partition _part;
    private readonly double[] _plane;
    private MpiFile? _file;

    private SolutionFile(Partition part, MpiFile file)
    {
        _part = part;
        _file = file;
        _plane = new double[part.Cells.Max(c => Vars * c.Size[0] * c.Size[1])];
    }

    /// <summary>Creates the file afresh (deleting an old one) for writing and reading. Collective.</summary>
    public static SolutionFile Create(Communicator comm, Partition part, string path)
    {
        if (comm.Rank == 0 && File.Exists(path))
            MpiFile.Delete(path);
        comm.Barrier();
        return new SolutionFile(part, MpiFile.Open(comm, path, MpiFileMode.ReadWrite | MpiFileMode.Create));
    }

    /// <summary>Opens an existing file for reading back. Collective.</summary>
    public static SolutionFile OpenForReading(Communicator comm, Partition part, string path) =>
        new(part, MpiFile.Open(comm, path, MpiFileMode.ReadOnly));

    /// <summary>Bytes of one dump: the whole grid.</summary>
    public static long DumpBytes(int n) => (long)n * n * n * Vars * sizeof(double);

    /// <summary>Writes u of every cell as dump number <paramref name="dump"/>. Collective.</summary>
    public void Write(int dump) => Transfer(dump, write: true);

    /// <summary>Reads dump number <paramref name="dump"/> into u of every cell. Collective.</summary>
    public void Read(int dump) => Transfer(dump, write: false);

    private void Transfer(int dump, bool write)
    {
        MpiFile file = _file ?? throw new ObjectDisposedException(nameof(SolutionFile));
        int n = _part.N;
        foreach (Cell c in _part.Cells)
        {
            int row = Vars * c.Size[0];
            long first = ((long)c.Low[2] * n + c.Low[1]) * n + c.Low[0];
            file.SetView<double>(dump * DumpBytes(n) + first * Vars * sizeof(double), row, Vars * n);
            Span<double> plane = _plane.AsSpan(0, row * c.Size[1]);
            for (int k = 0; k < c.Size[2]; k++)
            {
                // Blocks of the view are rows of the grid: plane k's first row is block k·n.
                long offset = (long)k * n * row;
                if (write)
                {
                    for (int j = 0; j < c.Size[1]; j++)
                        c.U.AsSpan(Vars * c.Index(0, j, k), row).CopyTo(plane.Slice(j * row, row));
                    file.WriteAtAll(offset, (ReadOnlySpan<double>)plane);
                }
                else
                {
                    file.ReadAtAll(offset, plane);
                    for (int j = 0; j < c.Size[1]; j++)
                        plane.Slice(j * row, row).CopyTo(c.U.AsSpan(Vars * c.Index(0, j, k), row));
                }
            }
        }
    }

    /// <summary>Sets u to zero on every point of every cell, so that a read that misses a point cannot pass (NPB's clear_timestep).</summary>
    public void ClearSolution()
    {
        foreach (Cell c in _part.Cells)
        {
            for (int k = 0; k < c.Size[2]; k++)
                for (int j = 0; j < c.Size[1]; j++)
                    c.U.AsSpan(Vars * c.Index(0, j, k), Vars * c.Size[0]).Clear();
        }
    }

    /// <summary>The size of the file in bytes. Collective.</summary>
    public long Size => (_file ?? throw new ObjectDisposedException(nameof(SolutionFile))).GetSize();

    /// <summary>Closes the file. Collective.</summary>
    public void Dispose()
    {
        _file?.Dispose();
        _file = null;
    }
}

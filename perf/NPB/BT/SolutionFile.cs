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
/// As NPB does, each cell is a subarray of the grid (MPI_Type_create_subarray): a cell's view
/// shows exactly its points of the dump, so one collective write moves the whole cell, packed
/// z-plane after z-plane, row after row. Per dump every rank makes two collective calls per
/// cell (the view, the write): all ranks hold the same number of cells in the multi-partition.
/// </remarks>
internal sealed class SolutionFile : IDisposable
{
    /// <summary>The file NPB's full subtype writes, in the working directory.</summary>
    public const string DefaultPath = "btio.full.out";

    private readonly Partition _part;
    private readonly double[] _cell;
    private MpiFile? _file;

    private SolutionFile(Partition part, MpiFile file)
    {
        _part = part;
        _file = file;
        _cell = new double[part.Cells.Max(c => Vars * c.Size[0] * c.Size[1] * c.Size[2])];
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
            // The dump in C order is [z][y][x·vars]: the cell is the block of its extents there.
            file.SetView<double>(dump * DumpBytes(n), sizes: [n, n, Vars * n],
                                 subsizes: [c.Size[2], c.Size[1], row], starts: [c.Low[2], c.Low[1], Vars * c.Low[0]]);
            Span<double> cell = _cell.AsSpan(0, row * c.Size[1] * c.Size[2]);
            if (write)
            {
                for (int k = 0, at = 0; k < c.Size[2]; k++)
                    for (int j = 0; j < c.Size[1]; j++, at += row)
                        c.U.AsSpan(Vars * c.Index(0, j, k), row).CopyTo(cell.Slice(at, row));
                file.WriteAtAll(FileOffset.Zero, (ReadOnlySpan<double>)cell);
            }
            else
            {
                file.ReadAtAll(FileOffset.Zero, cell);
                for (int k = 0, at = 0; k < c.Size[2]; k++)
                    for (int j = 0; j < c.Size[1]; j++, at += row)
                        cell.Slice(at, row).CopyTo(c.U.AsSpan(Vars * c.Index(0, j, k), row));
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

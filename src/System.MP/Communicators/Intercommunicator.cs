using System.Collections.Generic;
using System.MP.Interop;
using System.Text;

namespace System.MP;

/// <summary>
/// A communicator between two groups (MPI-4.0 §7.6): point-to-point ranks and
/// collective roots refer to the remote group.  Made by <see cref="Create"/>,
/// <see cref="Communicator.Spawn(string, string[], int, int)"/>, <see cref="Communicator.Accept"/> and
/// <see cref="Communicator.Connect"/>; <see cref="Communicator.Parent"/> is one.
/// </summary>
public sealed unsafe class Intercommunicator : Communicator
{
    internal Intercommunicator(CommHandle handle) : base(handle, predefined: false) { }

    /// <summary>Number of ranks in the remote group.</summary>
    public int RemoteSize
    {
        get
        {
            int n = 0;
            ThrowHelper.Check(Core.CommRemoteSize(Handle, &n));
            return n;
        }
    }

    /// <summary>
    /// Connects two disjoint groups (MPI_Intercomm_create).  Collective over
    /// <paramref name="local"/> and, at the two leaders, over <paramref name="peer"/>.
    /// </summary>
    /// <param name="local">This process's group.</param>
    /// <param name="localLeader">Rank in <paramref name="local"/> of this group's leader.</param>
    /// <param name="peer">A communicator containing both leaders (needed at the leaders only).</param>
    /// <param name="remoteLeader">Rank in <paramref name="peer"/> of the other group's leader.</param>
    /// <param name="tag">Tag the leaders use on <paramref name="peer"/>.</param>
    public static Intercommunicator Create(Communicator local, int localLeader, Communicator peer, int remoteLeader, int tag)
    {
        ArgumentNullException.ThrowIfNull(local);
        ArgumentNullException.ThrowIfNull(peer);
        CommHandle h = local.Handle, c = CommHandle.Null;
        if ((uint)localLeader >= (uint)local.Size)
            ThrowHelper.ThrowRank(localLeader, local.Size, "a member", nameof(localLeader));
        if (local.Rank == localLeader && (uint)remoteLeader >= (uint)peer.Size)
            ThrowHelper.ThrowRank(remoteLeader, peer.Size, "a member", nameof(remoteLeader));
        if ((uint)tag > (uint)Mpi.TagUpperBound)
            ThrowHelper.ThrowTag(tag, allowAny: false, nameof(tag));
        ThrowHelper.Check(Core.IntercommCreate(h, localLeader, local.Rank == localLeader ? peer.Handle : CommHandle.Null, remoteLeader, tag, &c));
        return new Intercommunicator(c);
    }

    /// <summary>
    /// One intracommunicator of both groups (MPI_Intercomm_merge). Collective.
    /// </summary>
    /// <param name="high">The group passing true is ordered after the other.</param>
    public Communicator Merge(bool high)
    {
        CommHandle c = CommHandle.Null;
        ThrowHelper.Check(Core.IntercommMerge(Handle, high ? 1 : 0, &c));
        return Wrap(c)!;
    }

    /// <summary>Waits for pending communication on it, then frees it (MPI_Comm_disconnect). Collective.</summary>
    public void Disconnect()
    {
        CommHandle h = Handle;
        MarkDisposed();
        ThrowHelper.Check(Core.CommDisconnect(h));
    }
}

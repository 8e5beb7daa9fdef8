// The gRPC service on rank 0: checks each request against the limits, turns it into one
// block of work per rank, submits it to the engine with the call's cancellation, and turns
// the ranks' outcomes into the reply — or a failure on any rank into a gRPC error naming the
// rank and its exception, or a stopped call into the status its caller expects.
using Grpc.Core;

namespace MotorService;

/// <summary>The Solver service of solver.proto, over the job's <see cref="JobEngine"/>.</summary>
public sealed class SolverService(JobEngine engine, IHostApplicationLifetime lifetime) : Solver.SolverBase
{
    /// <inheritdoc/>
    public override async Task<PiReply> Pi(PiRequest request, ServerCallContext context)
    {
        Bound(Limits.Violation(request));
        var (parts, call) = await Solve(request.Intervals, request.Fault, context, (first, end) => new Work
        {
            Kind = ProblemKind.Pi, Intervals = request.Intervals, First = first, End = end,
            HoldForLaterCalls = request.HoldForLaterCalls,
        });
        return new PiReply { Pi = parts.Sum(o => o.PartialSum), Ranks = parts.Length, Call = call };
    }

    /// <inheritdoc/>
    public override async Task<HeatReply> Heat(HeatRequest request, ServerCallContext context)
    {
        Bound(Limits.Violation(request));
        PlateSpec[] plates = request.Plates.Select(q => new PlateSpec
        {
            Id = q.Id, Width = q.Width, Height = q.Height, Top = q.Top, Bottom = q.Bottom, Left = q.Left, Right = q.Right,
        }).ToArray();
        var (parts, call) = await Solve(plates.Length, request.Fault, context, (first, end) => new Work
        {
            Kind = ProblemKind.Heat, Plates = plates[(int)first..(int)end], Steps = request.Steps,
        });
        var reply = new HeatReply { Ranks = parts.Length, Call = call };
        foreach (PlateOutcome o in parts.SelectMany(o => o.Plates ?? []))
            reply.Plates.Add(new PlateResult { Id = o.Id, Mean = o.Mean, Change = o.Change, Rank = o.Rank });
        return reply;
    }

    /// <inheritdoc/>
    public override Task<ShutdownReply> Shutdown(ShutdownRequest request, ServerCallContext context)
    {
        ShutdownReport report = engine.RequestShutdown();
        lifetime.StopApplication();
        var reply = new ShutdownReply { Calls = report.Calls };
        reply.Abandoned.Add(report.Abandoned);
        return Task.FromResult(reply);
    }

    /// <inheritdoc/>
    public override Task<StatusReply> Status(StatusRequest request, ServerCallContext context)
    {
        EngineStatus status = engine.Status();
        var reply = new StatusReply { Ranks = engine.Size, Calls = status.Calls, Answered = status.Answered, Stopped = status.Stopped };
        reply.Running.Add(status.Running);
        return Task.FromResult(reply);
    }

    /// <summary>A request above a limit is refused before any rank sees it.</summary>
    private static void Bound(string? violation)
    {
        if (violation is not null)
            throw new RpcException(new Status(StatusCode.InvalidArgument, violation));
    }

    /// <summary>
    /// Deals <paramref name="items"/> to the ranks in blocks (OScatterBlocks' rule), block(first, end) being
    /// rank r's work, and returns every rank's outcome in rank order with the call's number; the call
    /// stops on every rank when <paramref name="context"/>'s deadline passes or its caller cancels.
    /// </summary>
    private async Task<(Outcome[] Parts, long Call)> Solve(long items, Fault? fault, ServerCallContext context, Func<long, long, Work> block)
    {
        long call = 0;
        Work[] Blocks(long id)
        {
            call = id;
            return Enumerable.Range(0, engine.Size).Select(r =>
            {
                var (first, end) = Solvers.Block(items, engine.Size, r);
                Work work = block(first, end);
                work.Call = id;
                work.FaultRank = fault is { Inject: true } ? fault.Rank : -1;
                return work;
            }).ToArray();
        }
        try
        {
            return (await engine.Submit(Blocks, context.CancellationToken), call);
        }
        catch (RankFailureException e)
        {
            // A bad argument on any rank is the caller's; anything else is the job's.
            bool invalid = e.Failures.All(f => f.ErrorType is nameof(ArgumentException) or nameof(ArgumentOutOfRangeException));
            throw new RpcException(new Status(invalid ? StatusCode.InvalidArgument : StatusCode.Internal, e.Message));
        }
        catch (CallStoppedException e)
        {
            StatusCode code = e.Abandoned ? StatusCode.Unavailable
                : context.Deadline <= DateTime.UtcNow ? StatusCode.DeadlineExceeded : StatusCode.Cancelled;
            throw new RpcException(new Status(code, e.Message));
        }
        catch (InvalidOperationException e)
        {
            throw new RpcException(new Status(StatusCode.Unavailable, e.Message));
        }
    }
}

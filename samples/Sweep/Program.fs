// Sweep: a parameter sweep in F#.  Rank 0 broadcasts the run settings (OBcast
// of an F# record), deals the oscillators out (OScatterBlocks: each rank gets its block
// of records), every rank integrates its damped oscillators, the per-rank step
// counts are summed (typed Allreduce) and the outcomes are collected at rank 0
// (OGather of records carrying float arrays).  Neighbouring ranks swap their
// first energy sample through a span (Sendrecv), and rank 0 checks every outcome
// against the same integration done serially, bit for bit.
//
// usage: mpiexec -n 2 motor Sweep.dll [oscillators=24] [steps=2000]
module Sweep

open System
open System.Globalization
open System.MP

/// Broadcast once.  Value fields always travel; the string travels because it is marked.
[<Transportable>]
type Settings =
    { Steps: int
      Dt: float
      [<Transportable>] Method: string }

/// One point of the sweep.
[<Transportable>]
type Oscillator =
    { Id: int
      Damping: float
      Frequency: float }

/// What a rank sends back: the energy every 100 steps and the final one.
[<Transportable>]
type Outcome =
    { Id: int
      Rank: int
      FinalEnergy: float
      [<Transportable>] Energies: float[] }

let integrate (s: Settings) (o: Oscillator) =
    let mutable x = 1.0
    let mutable v = 0.0
    let w2 = o.Frequency * o.Frequency
    let energy () = 0.5 * v * v + 0.5 * w2 * x * x
    let samples = ResizeArray<float>()
    for step in 0 .. s.Steps - 1 do
        if step % 100 = 0 then samples.Add(energy ())
        v <- v + s.Dt * (-w2 * x - 2.0 * o.Damping * v) // semi-implicit Euler
        x <- x + s.Dt * v
    energy (), samples.ToArray()

let sweep count =
    [| for i in 0 .. count - 1 -> { Id = i; Damping = 0.01 * float (i % 6); Frequency = 0.5 + 0.25 * float (i / 6) } |]

[<EntryPoint>]
let main argv =
    let arg i fallback = if argv.Length > i then Int32.Parse(argv[i], CultureInfo.InvariantCulture) else fallback
    let count, steps = arg 0 24, arg 1 2000
    let world = Communicator.World
    let rank, size = world.Rank, world.Size

    // The root passes what it shares; the other ranks call the forms without it.
    let settings =
        if rank = 0 then world.OBcast({ Steps = steps; Dt = 0.01; Method = "semi-implicit Euler" }, 0)
        else world.OBcast<Settings>(0)
    let mine = (if rank = 0 then world.OScatterBlocks(sweep count, 0) else world.OScatterBlocks<Oscillator>(0))
    let outcomes =
        mine |> Array.map (fun o ->
            let final, energies = integrate settings o
            { Id = o.Id; Rank = rank; FinalEnergy = final; Energies = energies })

    // A typed reduction of plain values, and a span exchange round the ring.
    let totalSteps = world.Allreduce(int64 (mine.Length * settings.Steps), Op.Sum)
    let first = [| (if outcomes.Length > 0 then outcomes[0].Energies[0] else 0.0) |]
    let fromLeft = Array.zeroCreate<float> 1
    world.SendRecv(first, (rank + 1) % size, 5, fromLeft, (rank + size - 1) % size, 5) |> ignore
    world.Bcast(buffer = fromLeft.AsSpan(), root = 0) // the span form, picked by the parameter's name

    let gathered = world.OGather(outcomes, 0)
    if rank <> 0 then
        0
    else
        let all = gathered
        let serial = sweep count |> Array.map (integrate settings)
        let same =
            all.Length = count
            && Array.forall2 (fun (g: Outcome) (final, energies) -> g.FinalEnergy = final && g.Energies = energies) all serial
            && all |> Array.mapi (fun i g -> g.Id = i) |> Array.forall id
        let ranksSeen = all |> Array.map (fun g -> g.Rank) |> Array.distinct |> Array.length
        printfn "%d oscillators, %d steps of %g (%s) on %d ranks: %d steps in all" count settings.Steps settings.Dt settings.Method size totalSteps
        for g in all |> Array.filter (fun g -> g.Id % 5 = 0) do
            printfn "  oscillator %2d (rank %d): energy %.6f -> %.6f" g.Id g.Rank g.Energies[0] g.FinalEnergy
        printfn "outcomes came from %d ranks" ranksSeen
        printfn "%s" (if same then "gathered outcomes match the serial sweep" else "MISMATCH between the gathered outcomes and the serial sweep")
        if same && totalSteps = int64 (count * steps) then 0 else 1

"""What a job's layout of files asks of the site, beside where to put it: collective
calls for small pieces of a shared file taking turns, striping for a large shared file,
and what a target that compresses would store of what it wrote; each with the site's
figures of the two ways where it has both, and never a gain those figures deny."""

from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import replace

from exercises.advisor.job_io import JobIO
from exercises.advisor.patterns import interleaved, large_shared
from exercises.advisor.question import ExerciseShape, TargetFacts
from exercises.advisor.words import speed
from portal.units import GiB, KiB, MiB, ratio_as_shown, times

# (exercise key, the job mostly reads?) -> target key -> (MiB/s, where it comes from).
FiguresFor = Callable[[str, bool], Mapping[str, tuple[float, str]]]

# How each filesystem spreads a new file over its servers: the command, for DIR.
STRIPE_COMMANDS = {
    "lustre": "lfs setstripe -c -1 DIR (every OST; -c 8 for eight) before the file is made",
    "beegfs": "beegfs-ctl --setpattern --numtargets=8 DIR before the file is made",
}


def collective_advice(
    p: JobIO,
    targets: Sequence[TargetFacts],
    shapes: Sequence[ExerciseShape],
    figures_for: "FiguresFor",
) -> str:
    """For a job that wrote interleaved pieces of a shared file: collective I/O, or a
    file per process, with the site's figures of the same pieces written independently
    and collectively where it has both (on the target collective gains most), else ""."""
    if not interleaved(p):
        return ""
    text = (
        f"Your {p.nprocs:,} processes wrote pieces of {size_words(p.typical_request_bytes)} "
        "of one shared file in turns, each piece a request of its own. Collective MPI-IO "
        "gathers such pieces into a few large writes: call MPI_File_write_at_all instead "
        "of MPI_File_write_at, or ask your I/O library for collective transfers (HDF5: "
        "H5Pset_dxpl_mpio with H5FD_MPIO_COLLECTIVE; NetCDF: nc_var_par_access with "
        "NC_COLLECTIVE). Or let each process write a file of its own."
    )
    independent = next((e for e in shapes if e.mpi_io and not e.collective and e.shared_file), None)
    collective = next((e for e in shapes if e.collective), None)
    if independent is None or collective is None:
        return text
    together = figures_for(collective.key, False)
    found = best_gain(together, figures_for(independent.key, False))
    if found is None:
        return text
    best, gain, figures = found
    names = {t.key: t.name for t in targets}
    measured = f"exercises {collective.key} and {independent.key}, {together[best][1]}"
    if not gains(gain):  # slower on every target measured: promise nothing
        return (
            f"Your {p.nprocs:,} processes wrote pieces of {size_words(p.typical_request_bytes)} "
            "of one shared file in turns, each piece a request of its own. Collective "
            "MPI-IO gathers such pieces into a few large writes, but not faster here: on "
            f"every target this site measured both, collective calls were slower, and "
            f"least so on {names.get(best, best)}, {gain} independent ones: {figures} "
            f"({measured}). Keep your calls as they are, or let each process write a file "
            "of its own."
        )
    return (
        f"{text} On {names.get(best, best)}, collective calls wrote exercise "
        f"{independent.key}'s pieces {gain} independent ones: {figures} ({measured})."
    )


def gains(gain: str) -> bool:
    """Whether best_gain's words say a gain ("1.5× as fast as"), not a loss."""
    return not gain.endswith("slower than")


def best_gain(
    better: Mapping[str, tuple[float, str]],
    usual: Mapping[str, tuple[float, str]],
    where: Container[str] | None = None,
) -> tuple[str, str, str] | None:
    """Of the targets with both figures (and in `where`, if given), the one where the
    better way gained most: its key, "1.5× as fast as" (or "1.2× slower than"), and
    "120.0 MiB/s against 80.0 MiB/s"; None without both figures anywhere."""
    both = [
        k
        for k in better
        if k in usual and better[k][0] > 0 and usual[k][0] > 0 and (where is None or k in where)
    ]
    if not both:
        return None
    best = max(both, key=lambda k: better[k][0] / usual[k][0])
    fast, slow = better[best][0], usual[best][0]
    ratio = ratio_as_shown(fast, slow)
    gain = f"{times(ratio)} as fast as" if ratio >= 1 else f"{times(1 / ratio)} slower than"
    return best, gain, f"{speed(fast)} against {speed(slow)}"


def striping_advice(
    p: JobIO,
    targets: Sequence[TargetFacts],
    shapes: Sequence[ExerciseShape],
    figures_for: "FiguresFor",
) -> str:
    """For a job that streamed a large shared file: stripe it, with the way each of the
    site's targets offers (its spread directory, or its filesystem's command), and the
    site's figures of one such file on one server and spread where it has both."""
    if not large_shared(p):
        return ""
    wrote = (
        f"Your {p.nprocs:,} processes wrote {size_words(p.bytes_written)} into "
        f"{'one shared file' if p.shared_files == 1 else f'{p.shared_files} shared files'}."
    )
    text = (
        f"{wrote} A file lies on one storage server unless it is striped, and then that "
        "server's link and disks limit every process that writes it: spread it over all "
        "of them."
    )
    ways = []
    for t in targets:
        command = next((c for fs, c in STRIPE_COMMANDS.items() if fs in t.filesystem.lower()), "")
        if t.spread_directory:
            ways.append(f"on {t.name}, write it in {t.spread_directory}")
        elif command:
            ways.append(f"on {t.name} ({t.filesystem}), {command}")
    if ways:
        text += f" Here: {'; '.join(ways)}."
    spread = next((e for e in shapes if e.spread and e.shared_file), None)
    one = spread and next(
        (e for e in shapes if e.shared_file and not e.spread and twins(e, spread)), None
    )
    if spread is None or one is None:
        return text
    wide = figures_for(spread.key, False)
    # Only where the target has the spread layout: elsewhere the two ran alike.
    laid_out = {t.key for t in targets if t.spread_directory}
    found = best_gain(wide, figures_for(one.key, False), laid_out)
    if found is None:
        return text
    best, gain, figures = found
    names = {t.key: t.name for t in targets}
    measured = f"exercises {spread.key} and {one.key}, {wide[best][1]}"
    if not gains(gain):  # slower wherever the site measured it: promise nothing
        return (
            f"{wrote} A file lies on one storage server unless it is striped, but striping "
            "did not pay here: on every target where this site measured one such file "
            f"both ways, spread over the servers it was written slower, least so on "
            f"{names.get(best, best)}, {gain} on one server: {figures} ({measured}). Keep "
            "it on one server here, or measure your own file both ways before you stripe it."
        )
    return (
        f"{text} On {names.get(best, best)}, one such file spread over the servers was "
        f"written {gain} on one server: {figures} ({measured})."
    )


# Below this, what a job writes takes little space anywhere: no word on compression.
COMPRESSION_MIN = 64 * MiB


def compression_advice(p: JobIO, targets: Sequence[TargetFacts]) -> str:
    """For a job that wrote much, what each target that compresses would store of it:
    a log does not say whether the data compresses, so both cases, with the site's
    own ratio where its runs measured one, and how to find out."""
    packing = [t for t in targets if t.compression]
    if p.bytes_written < COMPRESSION_MIN or not packing:
        return ""
    written = size_words(p.bytes_written)
    said = []
    for t in packing:
        text = f"{t.name} compresses what it stores ({t.compression})"
        if t.stored_ratio:
            ratio, source = t.stored_ratio
            text += (
                f": data that compresses took {times(ratio)} less space there ({source}), so "
                f"your {written} would take about {size_words(round(p.bytes_written / ratio))} "
                "if it compresses as well"
            )
        said.append(text)
    return (
        f"Your job wrote {written}. {'; '.join(said)}. Data that is compressed already "
        "(gzip, NetCDF or HDF5 with a compression filter, images) or random takes all its "
        "space anywhere. A log does not say which yours is: compress a sample of your "
        "output (zstd -3 -c FILE | wc -c) and compare with its size."
    )


def twins(a: ExerciseShape, b: ExerciseShape) -> bool:
    """The same I/O, whatever the layout."""
    return replace(a, key="", title="", spread=False) == replace(b, key="", title="", spread=False)


def size_words(n: int) -> str:
    for unit, name in ((GiB, "GiB"), (MiB, "MiB"), (KiB, "KiB")):
        if n >= unit:
            value = n / unit
            return f"{value:,.0f} {name}" if value == int(value) else f"{value:,.1f} {name}"
    return f"{n} B"

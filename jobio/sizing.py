"""How long each target's run of a replay goes, where the target's speed decides it:
mdtest's files are made again and again on a fast target until they take the replay's
seconds (jobio/replay.py: sized_for), at the site's figure of file creates on that
target: the quiet figures of the closest exercise that makes files (mdtest), as the
advisor quotes them (exercises/catalogue/site_figures.py: calibration, else
published). fio and IOR last their seconds by themselves.

Each run's size is said, per target, on the replay page (Replay.sized): what it was
sized by, or why nothing could size it.
"""

from dataclasses import dataclass

from django.conf import settings

from exercises.advisor.facts import shapes
from exercises.advisor.job import resembles
from exercises.advisor.job_io import JobIO
from exercises.catalogue.models import Metric, SiteProfile, StorageTarget
from exercises.catalogue.site_figures import for_exercise
from jobio.replay import MOST_FILES, Replay, sized_for
from jobs.engines import Workload, get_engine
from jobs.figures import shown


@dataclass(frozen=True)
class Sized:
    workload: Workload
    said: str  # how it was sized, for the page; "" where its seconds did it alone


def sized_runs(
    planned: Replay, io: JobIO, profile: SiteProfile, targets: list[StorageTarget]
) -> dict[str, Sized]:
    """Target key -> its run's workload and how it was sized (1 query or 2 for mdtest)."""
    if planned.engine != "mdtest":
        return {t.key: Sized(planned.workload, "") for t in targets}
    plan = planned.workload
    files = plan.files_per_process * plan.processes
    makers = [s for s in shapes(profile) if s.engine and get_engine(s.engine).metadata]
    model = resembles(io, makers)
    figures = for_exercise(profile, model.key, Metric.CREATE) if model else {}
    found = {}
    for target in targets:
        figure = figures.get(target.key)
        workload = sized_for(
            plan,
            planned.engine,
            figure.value if figure else None,
            max_files=settings.REPLAY_MAX_FILES,
            max_bytes=settings.REPLAY_MAX_BYTES,
        )
        if figure is None:
            said = (
                f"made once, stopped after {plan.seconds} s: this site has no figure of "
                f"file creates on {target.name} to size it by"
                + (f" (a calibration round of exercise {model.key} measures one)" if model else "")
            )
        else:
            by = (
                f"exercise {model.key}'s {shown(figure.value)} files a second on "
                f"{target.name} ({figure.source})"
            )
            rounds, made = workload.iterations, workload.files_per_process * plan.processes
            more = f" (more than the job's {files:,} at once)" if made > files else ""
            if made > files and at_most(plan) == workload.files_per_process:
                more = (
                    f" (more than the job's {files:,} at once: the most a replay makes at "
                    "once, so the bound, not its seconds, decided how many)"
                )
            said = (
                f"{made:,} files{more} made {rounds} times over, each round stopped after "
                f"{workload.seconds} s, by {by}"
                if rounds > 1
                else f"made once, stopped after {plan.seconds} s, by {by}"
            )
        found[target.key] = Sized(workload, said)
    return found


def at_most(plan: Workload) -> int:
    """The most files a process of this replay makes at once: within the site's bounds
    of files and bytes at once (jobio/replay.py: sized_for)."""
    file_size = plan.size_per_process // plan.files_per_process
    return min(
        MOST_FILES,
        settings.REPLAY_MAX_FILES // plan.processes,
        settings.REPLAY_MAX_BYTES // (file_size * plan.processes),
    )

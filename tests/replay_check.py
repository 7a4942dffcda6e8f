"""The replay's self-check: each exercise of the dev site is run once with Darshan on
$SCRATCH; its log, read in the sandbox as Check my job reads a user's, is turned into a
replay (jobio/replay.py, with the site's bounds); then on each target the exercise runs
and its replay runs right after it, one run at a time (the account's runs go in turn).
The replay should measure what the exercise measures: its figure within ±30 % of the
exercise's on the same target, and the targets in the same order. A short check runs in
`make test` (tests/jobio/test_replay_self_check_live.py), every exercise on every target
in `make bench` (bench/test_replay_self_check.py)."""

import time
from dataclasses import dataclass

from django.conf import settings

from exercises.advisor.job_io import JobIO
from exercises.catalogue import lessons
from exercises.catalogue.models import SiteProfile
from exercises.lab.start import start_exercise_run
from jobio.models import RunLog
from jobio.replay import NotReplayable, replay_of
from jobio.replays import time_limit_minutes
from jobs.models import BenchmarkRun, RunStatus
from jobs.submission import start_run
from portal.models import ClusterAccount
from tests.runs import follow

LOG_TARGET = "scratch"  # a disk: runs in memory are not recorded by Darshan
WITHIN = 0.30


@dataclass(frozen=True)
class Pair:
    """An exercise's figure on a target beside its replay's there."""

    exercise: str
    target: str
    unit: str  # "MiB/s", or "files/s" where both ran mdtest
    engines: str  # "fio → fio"
    exercise_figure: float | None
    replay_figure: float | None
    # The exercise writes through the page cache: its figure is partly memory's, where
    # the replay's goes past it (jobio/replay.py says why).
    cached: bool = False

    @property
    def ratio(self) -> float | None:
        if not self.exercise_figure or self.replay_figure is None:
            return None
        return self.replay_figure / self.exercise_figure

    @property
    def within(self) -> bool:
        return self.ratio is not None and abs(self.ratio - 1) <= WITHIN

    @property
    def line(self) -> str:
        def shown(value: float | None) -> str:
            return "–" if value is None else f"{value:,.1f}"

        ratio = "–" if self.ratio is None else f"{self.ratio:.2f}"
        mark = "" if self.within else "  outside ±30 %" + (", cached" if self.cached else "")
        return (
            f"{self.exercise:7} {self.target:8} {self.engines:14} "
            f"{shown(self.exercise_figure):>10} {shown(self.replay_figure):>10} "
            f"{self.unit:7} {ratio:>5}{mark}"
        )


def io_of(run: BenchmarkRun, timeout: float = 90) -> JobIO:
    """The run's own I/O, once the worker has read its Darshan logs."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        row = RunLog.objects.filter(run=run).first()
        if row and row.io:
            return JobIO.from_json(row.io)
        assert not (row and (row.problem or row.missing)), row.problem or row.missing
        time.sleep(0.3)
    raise AssertionError(f"no I/O for run {run.pk} after {timeout}s")


def self_check(
    account: ClusterAccount, profile: SiteProfile, exercise_keys: list[str], target_keys: list[str]
) -> tuple[list[Pair], dict[str, str]]:
    """The pairs, exercise by exercise in the order given, target by target; and the
    exercises whose log could not be replayed, with why."""
    exercises = [profile.exercises.get(key=key) for key in exercise_keys]
    targets = [profile.targets.get(key=key) for key in target_keys]
    log_target = profile.targets.get(key=LOG_TARGET)
    logged = follow(*[start_exercise_run(account, e, log_target) for e in exercises], timeout=600)
    pairs, refused = [], {}
    for exercise, log_run in zip(exercises, logged, strict=True):
        assert log_run.status == RunStatus.COMPLETED, (exercise.key, log_run.status_reason)
        try:
            replay = replay_of(
                io_of(log_run),
                max_bytes=settings.REPLAY_MAX_BYTES,
                max_processes=settings.REPLAY_MAX_PROCESSES,
                seconds=settings.REPLAY_SECONDS,
            )
        except NotReplayable as e:
            refused[exercise.key] = str(e)
            continue
        runs = []
        for target in targets:
            runs.append(start_exercise_run(account, exercise, target))
            runs.append(
                start_run(
                    account,
                    target,
                    replay.workload,
                    engine=replay.engine,
                    time_limit_minutes=time_limit_minutes(replay.workload),
                )
            )
        done = follow(*runs, timeout=600)
        for target, ran, replayed in zip(targets, done[::2], done[1::2], strict=True):
            both_files = ran.engine == replayed.engine == "mdtest"
            pairs.append(
                Pair(
                    exercise=exercise.key,
                    target=target.key,
                    unit="files/s" if both_files else "MiB/s",
                    engines=f"{ran.engine} → {replayed.engine}",
                    exercise_figure=_figure(ran, files=both_files),
                    replay_figure=_figure(replayed, files=both_files),
                    cached=not (exercise.workload.direct or ran.engine == "mdtest"),
                )
            )
    return pairs, refused


def _figure(run: BenchmarkRun, files: bool) -> float | None:
    """Files created a second where both are mdtest; else MiB/s written (mdtest's: its
    files' bytes at the files a second)."""
    result = getattr(run, "result", None)
    if run.status != RunStatus.COMPLETED or result is None:
        return None
    create = result.rates.get("create_ops_s")
    if files:
        return create
    if result.engine == "mdtest":
        workload = run.workload_params
        return create * (workload.size_per_process / workload.files_per_process) / 2**20
    return result.write_mib_s


def lessons_on_replays(profile: SiteProfile, pairs: list[Pair]) -> list[lessons.Verdict]:
    """Each claim of the exercises' lessons whose sides were replayed, judged on the
    replays' figures."""
    replayed = {lessons.Side(p.exercise, p.target): p.replay_figure for p in pairs}
    claims = [c for e in profile.exercises.all() for c in lessons.claims_of(e)]
    mine = [c for c in claims if c.faster in replayed and c.slower in replayed]
    return lessons.judge(mine, replayed.get)


def order_broken(pairs: list[Pair]) -> list[str]:
    """Each pair of targets the exercise tells apart (one more than 30 % faster than the
    other) that its replay puts the other way round: "2a: tmp > global, replay 10 < 40"."""
    found = []
    for key in dict.fromkeys(p.exercise for p in pairs):
        mine = [p for p in pairs if p.exercise == key and p.ratio is not None]
        for fast in mine:
            for slow in mine:
                apart = fast.exercise_figure > (1 + WITHIN) * slow.exercise_figure
                if apart and fast.replay_figure <= slow.replay_figure:
                    found.append(
                        f"{key}: {fast.target} > {slow.target} by the exercise, replay "
                        f"{fast.replay_figure:,.1f} ≤ {slow.replay_figure:,.1f}"
                    )
    return found

"""What a round would cost, said before it starts: how many jobs, and about how long
they take CALIBRATION_PARALLEL at a time. The page asks to confirm with these figures.

A run's time comes from the site's own earlier runs (their mean, start to end, as
Slurm reported them): of the same exercise on the same target, else of the exercise on
any target; else a timed exercise's seconds and a start-up; else the mean of every run
the site has ended; else the time limit. The time limits bound the round: "at most"."""

import math
from collections import defaultdict
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db.models import Count, F, Sum

from exercises.catalogue.models import Exercise, StorageTarget
from jobs.models import BenchmarkRun, RunStatus

# What a job takes besides its benchmark: Slurm's start, the directory, the post.
START_UP_SECONDS = 20


@dataclass(frozen=True)
class Plan:
    exercises: list[Exercise]
    targets: list[StorageTarget]
    repeat: int
    parallel: int
    minutes: int  # about
    at_most_minutes: int  # every run up to its time limit
    guessed: int  # pairs with no earlier run to go by

    @property
    def runs(self) -> int:
        return len(self.exercises) * len(self.targets) * self.repeat


def plan(exercises: list[Exercise], targets: list[StorageTarget], repeat: int) -> Plan:
    """The cost of `repeat` runs of each exercise on each target (1 query)."""
    seen = _mean_seconds(exercises)
    typical = at_most = 0.0
    guessed = 0
    for exercise in exercises:
        for target in targets:
            limit = exercise.time_limit_minutes * 60
            seconds = seen.get((exercise.pk, target.pk))
            if seconds is None:
                guessed += 1
                seconds = (
                    seen.get((exercise.pk, None))
                    or (exercise.seconds and exercise.seconds + START_UP_SECONDS)
                    or seen.get((None, None))
                    or limit
                )
            # Slurm's times leave out the wait for a free slot to be seen: a sync cycle.
            typical += (min(seconds, limit) + settings.SYNC_INTERVAL_SECONDS) * repeat
            at_most += limit * repeat
    parallel = settings.CALIBRATION_PARALLEL
    return Plan(
        exercises=exercises,
        targets=targets,
        repeat=repeat,
        parallel=parallel,
        minutes=math.ceil(typical / parallel / 60),
        at_most_minutes=math.ceil(at_most / parallel / 60),
        guessed=guessed,
    )


def _mean_seconds(exercises: list[Exercise]) -> dict[tuple[int | None, int | None], float]:
    """Mean seconds of the site's ended runs: (exercise id, target id) for each pair,
    (exercise id, None) for an exercise on any target, (None, None) for every run of
    the site (1 query)."""
    site = exercises[0].profile_id if exercises else None
    rows = (
        BenchmarkRun.objects.filter(
            exercise__profile_id=site,
            status=RunStatus.COMPLETED,
            started_at__isnull=False,
            ended_at__isnull=False,
        )
        .values_list("exercise_id", "target_id")
        .annotate(total=Sum(F("ended_at") - F("started_at")), n=Count("pk"))
        .order_by()
    )
    sums: dict[tuple[int | None, int | None], list[float]] = defaultdict(lambda: [0.0, 0])
    for exercise_id, target_id, total, n in rows:
        if not isinstance(total, timedelta):
            continue
        for key in ((exercise_id, target_id), (exercise_id, None), (None, None)):
            sums[key][0] += total.total_seconds()
            sums[key][1] += n
    return {key: total / n for key, (total, n) in sums.items() if n}

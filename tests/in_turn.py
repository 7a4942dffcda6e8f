"""A trainee's start of one exercise on every target, against the site's quiet
figures: the live test (tests/exercises/lab/test_in_turn_live.py) and `make bench`
(bench/test_in_turn.py) share it."""

import io
import time
from dataclasses import dataclass

from django.core.management import call_command
from django.test import Client

from exercises.catalogue.models import MeasuredReference, SiteProfile
from jobs.models import BenchmarkRun
from tests.runs import follow

# Within 15 % of the calibration's median, or inside its lowest-highest band.
TOLERANCE = 0.15


# The four targets of the course's lab, which a trainee ticks at once (the dev site has
# $BINFS and $WORK besides).
FOUR_TARGETS = ["home", "global", "scratch", "tmp"]


def calibrate(
    profile: SiteProfile, staff_username: str, exercise: str, repeat: int, targets: list[str]
) -> dict:
    """Target key -> the quiet figure of `exercise` there: a calibration round of the
    lab's own rules on `targets`, one run at a time (`calibrate --wait`)."""
    out = io.StringIO()
    call_command(
        "calibrate", "--user", staff_username, "--repeat", str(repeat), "--exercises", exercise,
        "--targets", ",".join(targets), "--wait", "--timeout", "300", stdout=out,
    )  # fmt: skip
    measured = MeasuredReference.objects.filter(
        exercise__profile=profile, exercise__key=exercise, target__key__in=targets
    )
    quiet = {m.target.key: m for m in measured.select_related("target")}
    assert set(quiet) == set(targets), out.getvalue()
    return quiet


@dataclass
class Start:
    """One click's runs; once followed (`finish`), the seconds from the click to the
    last figure (before: the monotonic clock at the click)."""

    runs: list[BenchmarkRun]
    seconds: float

    def overlapping(self) -> list[tuple[str, str]]:
        """Pairs of runs whose times in Slurm overlapped (Slurm's clock, to the second)."""
        ordered = sorted(self.runs, key=lambda r: (r.started_at, r.ended_at))
        return [
            (a.target.key, b.target.key)
            for a, b in zip(ordered, ordered[1:], strict=False)
            if b.started_at < a.ended_at
        ]

    def off(self, quiet: dict[str, MeasuredReference]) -> dict[str, tuple[float | None, float]]:
        """Target key -> (its figure, the quiet median) for each run outside the
        tolerance: more than 15 % from the median and outside the band."""
        found = {}
        for run in self.runs:
            m = quiet[run.target.key]
            got = run.result.write_mib_s if hasattr(run, "result") else None
            near = got is not None and abs(got - m.median) <= TOLERANCE * m.median
            inside = got is not None and m.low <= got <= m.high
            if not (near or inside):
                found[run.target.key] = (got, m.median)
        return found


def start_everywhere(client: Client, user, exercise: str, targets: list[str]) -> Start:
    """The lab's "Start runs" with every target ticked, as the form posts it (the
    runs not yet followed: `finish`)."""
    began = time.monotonic()
    before = set(BenchmarkRun.objects.filter(user=user).values_list("pk", flat=True))
    response = client.post(f"/lab/{exercise}/runs", {"targets": targets, "again": "1"})
    assert response.status_code == 302, response.content.decode()[:500]
    runs = list(BenchmarkRun.objects.filter(user=user).exclude(pk__in=before))
    assert len(runs) == len(targets)
    return Start(runs=runs, seconds=began)


def finish(start: Start) -> Start:
    """The start's runs followed to their figures, and the seconds from the click to
    the last of them."""
    done = follow(*start.runs, timeout=120)
    return Start(runs=done, seconds=time.monotonic() - start.seconds)

"""What pages say of the weather: each target's reading now against its usual, the
last 24 hours as a strip, the reading nearest a run, a week as a heatmap, and which
targets are slow now. Each is one query, whatever the number of targets."""

import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import QuerySet
from django.utils import timezone

from exercises.catalogue.models import SiteProfile, StorageTarget
from exercises.weather.models import Kind, Reading
from jobs.engines import get_engine
from jobs.figures import shown
from jobs.models import BenchmarkRun

# Below half its usual, a target is slow now; from 0.8 of it, as usual.
SLOW = 0.5
USUAL = 0.8
STRIP_HOURS = 24
HEATMAP_DAYS = 7
UNIT = {Kind.STREAMING: "MiB/s", Kind.METADATA: "files created/s"}


def fresh_for() -> timedelta:
    """How old a reading may be and still say "now": two rounds of canaries (so one
    late round does not blank the page), and half an hour at least (a round an
    administrator ran by hand while the schedule is off)."""
    return timedelta(minutes=max(2 * settings.WEATHER_MINUTES, 30))


def percent(ratio: float) -> str:
    return f"{round(ratio * 100)} %"


def level(ratio: float | None) -> str:
    """A CSS class: how a ratio reads ("none": no reading, or no usual to set it by)."""
    if ratio is None:
        return "none"
    return "slow" if ratio < SLOW else "low" if ratio < USUAL else "usual"


def when(moment: datetime, now: datetime | None = None) -> str:
    """ "14:05" today, "3 May 14:05" before."""
    local, today = timezone.localtime(moment), timezone.localtime(now or timezone.now())
    return f"{local:%H:%M}" if local.date() == today.date() else f"{local:%-d %B %H:%M}"


def _readings(targets, since: datetime) -> QuerySet[Reading]:
    """The readings with a figure of `targets` since `since`, oldest first."""
    return (
        Reading.objects.filter(target__in=targets, taken_at__gte=since, figure__isnull=False)
        .only("target_id", "kind", "taken_at", "figure", "usual", "during_class")
        .order_by("taken_at")
    )


@dataclass
class Cell:
    start: datetime
    ratios: list[float] = field(default_factory=list)

    @property
    def ratio(self) -> float | None:
        """The hour's median ratio (never its lowest or highest reading)."""
        return statistics.median(self.ratios) if self.ratios else None

    @property
    def level(self) -> str:
        return level(self.ratio)

    @property
    def text(self) -> str:
        return percent(self.ratio) if self.ratio is not None else "–"

    @property
    def number(self) -> str:
        """The percent without its sign, which a phone's heat map leaves out."""
        return str(round(self.ratio * 100)) if self.ratio is not None else "–"

    @property
    def label(self) -> str:
        hour = f"{timezone.localtime(self.start):%H}:00"
        return f"from {hour}: {self.text}" if self.ratios else f"from {hour}: no reading"


def _hours(end: datetime, count: int) -> list[Cell]:
    """`count` hour cells, oldest first, the last one the hour `end` is in."""
    top = end.replace(minute=0, second=0, microsecond=0)
    return [Cell(top - timedelta(hours=count - 1 - i)) for i in range(count)]


def _place(cells: list[Cell], reading: Reading) -> None:
    index = int((reading.taken_at - cells[0].start) // timedelta(hours=1))
    if 0 <= index < len(cells) and reading.ratio is not None:
        cells[index].ratios.append(reading.ratio)


@dataclass
class KindWeather:
    """One kind of canary on one target: its latest reading of the last 24 hours and
    those hours as a strip."""

    target: StorageTarget
    kind: Kind
    latest: Reading | None
    strip: list[Cell]
    now: datetime

    @property
    def fresh(self) -> bool:
        return self.latest is not None and self.now - self.latest.taken_at <= fresh_for()

    @property
    def level(self) -> str:
        return level(self.latest.ratio) if self.fresh else "none"

    @property
    def sentence(self) -> str:
        """What the latest reading says, in words."""
        latest, what = self.latest, Kind(self.kind).label
        if latest is None:
            return f"No {what} reading in the last {STRIP_HOURS} hours."
        at = when(latest.taken_at, self.now)
        figure = f"{shown(latest.figure)} {UNIT[self.kind]}"
        class_note = ", while trainees' runs were going on it" if latest.during_class else ""
        if latest.ratio is None:
            said = f"{what}: {figure} at {at}{class_note}; no usual figure yet (not calibrated)."
        else:
            against = f"{figure} against {shown(latest.usual)}"
            said = f"{what}: {percent(latest.ratio)} of its usual ({against}) at {at}{class_note}."
        if not self.fresh:
            said += " That was a while ago: there is no reading now."
        elif latest.ratio is not None and latest.ratio < SLOW:
            return f"Slow now: {said}"
        return said[:1].upper() + said[1:]

    @property
    def strip_label(self) -> str:
        """The strip in words, for those who do not see it."""
        counts = defaultdict(int)
        for cell in self.strip:
            counts[cell.level] += 1
        parts = [
            f"{counts[key]} {words}"
            for key, words in (
                ("usual", "as usual"),
                ("low", "below usual"),
                ("slow", "slow (under half its usual)"),
                ("none", "without a reading"),
            )
            if counts[key]
        ]
        what = f"{self.target.name}, {Kind(self.kind).label}"
        return f"{what}, last {STRIP_HOURS} hours by the hour: {', '.join(parts)}."


def weather(
    targets: list[StorageTarget], now: datetime | None = None
) -> dict[int, list[KindWeather]]:
    """Target id -> the weather of each kind of canary on it (1 query)."""
    now = now or timezone.now()
    strips = {(t.pk, k): _hours(now, STRIP_HOURS) for t in targets for k in Kind}
    latest: dict[tuple[int, str], Reading] = {}
    for reading in _readings(targets, now - timedelta(hours=STRIP_HOURS)):
        _place(strips[(reading.target_id, reading.kind)], reading)
        latest[(reading.target_id, reading.kind)] = reading
    return {
        t.pk: [
            KindWeather(t, k, latest.get((t.pk, k)), strips[(t.pk, k)], now)
            for k in Kind
            if (t.pk, k) in latest or k == Kind.STREAMING
        ]
        for t in targets
    }


def slow_now(profile: SiteProfile, now: datetime | None = None) -> dict[str, str]:
    """Target key -> "$GLOBAL is slow now: it read 38 % of its usual at 14:05", for
    each target whose latest reading, of the last fresh_for(), is under SLOW of its
    usual (a streaming write's first) (1 query)."""
    now = now or timezone.now()
    latest: dict[tuple[int, str], Reading] = {}
    rows = _readings(profile.targets.all(), now - fresh_for()).select_related("target")
    for reading in rows.only(*_FIELDS, "target__key", "target__name"):
        latest[(reading.target_id, reading.kind)] = reading
    said: dict[str, str] = {}
    for (_, kind), reading in sorted(latest.items(), key=lambda item: item[0][1] != Kind.STREAMING):
        ratio = reading.ratio
        if ratio is None or ratio >= SLOW or reading.target.key in said:
            continue
        what = "" if kind == Kind.STREAMING else " for file creates"
        said[reading.target.key] = (
            f"{reading.target.name} is slow now{what}: it read {percent(ratio)} of its usual "
            f"at {when(reading.taken_at, now)}"
        )
    return said


_FIELDS = ("target_id", "kind", "taken_at", "figure", "usual", "during_class")


def nearest(run: BenchmarkRun) -> Reading | None:
    """The canary's reading on the run's target nearest the middle of the run (of its
    kind: file creates for a metadata run, else a streaming write), within a round's
    time of it either way (1 query)."""
    kind = Kind.METADATA if get_engine(run.engine).metadata else Kind.STREAMING
    start = run.started_at or run.created_at
    middle = start + ((run.ended_at or start) - start) / 2
    near = (
        Reading.objects.filter(
            target_id=run.target_id,
            kind=kind,
            figure__isnull=False,
            taken_at__range=(middle - fresh_for(), middle + fresh_for()),
        )
        .exclude(run_id=run.pk)
        .only(*_FIELDS)
    )
    return min(near, key=lambda r: abs(r.taken_at - middle), default=None)


@dataclass
class HeatmapRow:
    start: datetime
    cells: list[Cell]

    @property
    def day(self) -> str:
        return f"{timezone.localtime(self.start):%A %-d %B}"

    @property
    def hour(self) -> str:
        return f"{timezone.localtime(self.start):%H}:00"


def heatmap(profile: SiteProfile, now: datetime | None = None) -> tuple[list, list[HeatmapRow]]:
    """The columns (target, kind) and a row per hour of the last HEATMAP_DAYS, newest
    first, each cell the hour's median ratio (1 query, and 1 for the targets)."""
    now = now or timezone.now()
    targets = list(profile.targets.all())
    hours = HEATMAP_DAYS * 24
    columns = [(t, k) for t in targets for k in Kind]
    grid = {(t.pk, k): _hours(now, hours) for t, k in columns}
    for reading in _readings(targets, now - timedelta(hours=hours)):
        _place(grid[(reading.target_id, reading.kind)], reading)
    rows = (
        [
            HeatmapRow(start, [grid[(t.pk, k)][i] for t, k in columns])
            for i, start in enumerate(cell.start for cell in grid[columns[0][0].pk, columns[0][1]])
        ]
        if columns
        else []
    )
    return columns, rows[::-1]

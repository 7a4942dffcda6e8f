"""`manage.py weather`: the filesystem's weather (exercises/weather/).

--once runs one round of canaries on every target of the active profile (or those of
--targets), each target's canaries one after another, waits for their readings (at
most --timeout seconds) and prints, per target, the figure, the usual figure and
their ratio. A round goes through even while the schedule is stopped by a refusal:
an administrator runs it to try again. Without --once it prints the stored
readings: the latest of each kind on each target, and how many are kept. --json
prints JSON."""

import json
import time
from datetime import datetime

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import Q
from django.utils import timezone

from exercises.catalogue.models import SiteProfile, StorageTarget
from exercises.catalogue.profiles import profile_for_command
from exercises.weather import canaries, readings
from exercises.weather.models import Kind, Reading
from exercises.weather.pages import UNIT

Round = dict[tuple[int, str], Reading]  # (target id, kind) -> this round's reading


class Command(BaseCommand):
    help = "Take the filesystem's weather: a canary round (--once), or the stored readings."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--once", action="store_true", help="run one round of canaries")
        parser.add_argument("--json", action="store_true", help="print JSON")
        parser.add_argument("--targets", help="with --once: target keys, comma-separated")
        parser.add_argument(
            "--timeout", default="300", help="with --once: seconds to wait for the readings"
        )

    def handle(self, *args: object, **options: object) -> None:
        profile = profile_for_command()
        if options["once"]:
            targets = self._targets(profile, options["targets"])
            found = self._round(profile, targets, self._seconds(options["timeout"]))
            report = {
                "profile": profile.name,
                "targets": {
                    t.key: {"name": t.name}
                    | {k: _reading(r) for (tid, k), r in found.items() if tid == t.pk}
                    for t in targets
                },
                "cost": _cost(targets, found),
            }
        else:
            report = _stored(profile)
        report["status"] = canaries.status(profile)
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
        else:
            self.stdout.write(_text(report))

    def _targets(self, profile: SiteProfile, keys: object) -> list[StorageTarget]:
        targets = list(profile.targets.all())
        if not keys:
            return targets
        wanted = [key.strip() for key in str(keys).split(",") if key.strip()]
        by_key = {t.key: t for t in targets}
        if unknown := [key for key in wanted if key not in by_key]:
            raise CommandError(
                f"{profile.title} has no target {', '.join(unknown)}; its targets are "
                f"{', '.join(by_key)}."
            )
        return [by_key[key] for key in dict.fromkeys(wanted)]

    def _seconds(self, value: object) -> int:
        try:
            seconds = int(str(value))
        except ValueError:
            seconds = 0
        if not 1 <= seconds <= 3600:
            raise CommandError(f"--timeout takes a whole number from 1 to 3600, not {value!r}.")
        return seconds

    def _round(self, profile: SiteProfile, targets: list[StorageTarget], timeout: int) -> Round:
        """Starts each target's canaries, one after another on a target, and waits for
        their readings (taken here as beat's task takes them)."""
        try:
            kinds = canaries.exercises(profile)
        except canaries.WeatherRefused as refused:
            raise CommandError(str(refused)) from None
        wanted = {(t.pk, kind) for t in targets for kind in kinds}
        found: Round = {}
        deadline = time.monotonic() + timeout
        while True:
            readings.settle()
            found = {
                (r.target_id, r.kind): r
                for r in Reading.objects.filter(
                    pk__in=[r.pk for r in found.values()]
                ).select_related("run", "target", "exercise")
            }
            _stop_if_refused(found)
            if len(found) == len(wanted) and all(r.settled for r in found.values()):
                return found
            if time.monotonic() > deadline:
                raise CommandError(_late(found, targets, kinds, timeout))
            try:
                step = canaries.step(profile, _not_yet(found), targets)
            except canaries.WeatherRefused as refused:
                raise CommandError(str(refused)) from None
            found |= {(r.target_id, r.kind): r for r in step.started}
            time.sleep(1)


def _not_yet(found: Round) -> canaries.Due:
    """A kind is due on a target until this round has started it there."""
    started = set(found)
    return lambda target, kind, _latest: (target.pk, kind) not in started


def _stop_if_refused(found: Round) -> None:
    for reading in found.values():
        run = reading.run
        if canaries.slurm_refused(run):
            raise CommandError(
                f"Slurm refused the canary on {reading.target.name} ({run.status_reason}). "
                "The weather has stopped: no canary starts by itself until a "
                "`manage.py weather --once` goes through."
            )


def _late(found: Round, targets: list[StorageTarget], kinds: dict, timeout: int) -> str:
    waiting = []
    for target in targets:
        for kind in kinds:
            reading = found.get((target.pk, kind))
            if reading is None:
                waiting.append(f"{target.name} {kind}: not started (another canary was going)")
            elif not reading.settled:
                run = reading.run
                waiting.append(
                    f"{target.name} {kind}: run {run.key} {run.get_status_display().lower()}"
                )
    return (
        f"No reading after {timeout} s of: {'; '.join(waiting)}. What was started goes on by "
        "itself, and its reading is kept when it ends (beat's take_readings)."
    )


def _reading(reading: Reading) -> dict:
    run = reading.run
    seconds = (
        (run.ended_at - run.started_at).total_seconds() if run.started_at and run.ended_at else None
    )
    ratio = reading.ratio
    return {
        "exercise": reading.exercise.key if reading.exercise else None,
        "figure": reading.figure,
        "usual": reading.usual,
        "ratio": round(ratio, 3) if ratio is not None else None,
        "unit": UNIT[reading.kind],
        "taken_at": reading.taken_at.isoformat(),
        "during_class": reading.during_class,
        "problem": reading.problem,
        "run": str(run.key),
        "seconds": seconds,
    }


def _cost(targets: list[StorageTarget], found: Round) -> dict:
    """The time a round's canaries held each target (their jobs' time in Slurm), and
    its share of WEATHER_MINUTES: what the schedule costs a target."""
    held = {t.key: 0.0 for t in targets}
    for (target_id, _), reading in found.items():
        seconds = _reading(reading)["seconds"] or 0.0
        held[next(t.key for t in targets if t.pk == target_id)] += seconds
    interval = settings.WEATHER_MINUTES * 60
    return {
        "seconds": held,
        "every_minutes": settings.WEATHER_MINUTES,
        "share": {key: round(s / interval, 4) for key, s in held.items()} if interval else None,
    }


def _stored(profile: SiteProfile) -> dict:
    kept = Reading.objects.filter(target__profile=profile)
    settled = kept.filter(Q(figure__isnull=False) | ~Q(problem=""))
    latest = (
        settled.select_related("run", "target", "exercise")
        .order_by("target__order", "target_id", "kind", "-taken_at")
        .distinct("target__order", "target_id", "kind")
    )
    targets: dict[str, dict] = {}
    for reading in latest:
        entry = targets.setdefault(reading.target.key, {"name": reading.target.name})
        entry[reading.kind] = _reading(reading)
    return {"profile": profile.name, "kept": kept.count(), "targets": targets}


def _text(report: dict) -> str:
    lines = []
    for key, entry in report["targets"].items():
        for kind in Kind:
            if (r := entry.get(kind)) is None:
                continue
            at = timezone.localtime(datetime.fromisoformat(r["taken_at"]))
            if r["figure"] is None:
                lines.append(
                    f"{entry['name']} ({key}) {Kind(kind).label}: no figure ({r['problem']})"
                )
                continue
            usual = f"{r['usual']:.1f}" if r["usual"] is not None else "none (not calibrated)"
            ratio = f"{r['ratio']:.2f}" if r["ratio"] is not None else "–"
            lines.append(
                f"{entry['name']} ({key}) {Kind(kind).label}: {r['figure']:.1f} {r['unit']}, "
                f"usual {usual}, ratio {ratio}, at {at:%Y-%m-%d %H:%M}"
            )
    if "kept" in report:
        lines.append(f"{report['kept']} readings kept.")
    if (cost := report.get("cost")) and cost["share"]:
        busiest = max(cost["share"], key=cost["share"].get)
        lines.append(
            f"The round held {busiest} longest: {cost['seconds'][busiest]:.0f} s, "
            f"{cost['share'][busiest]:.1%} of its {cost['every_minutes']} minutes."
        )
    lines.append(report["status"])
    return "\n".join(lines)

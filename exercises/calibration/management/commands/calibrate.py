"""`manage.py calibrate`: measures the site's own references (exercises/calibration/rounds.py).

By default it starts a round and returns; Celery beat and a worker carry it on.
With --wait it follows the round to its end (moving it along itself, so it ends
even where beat is not running) and prints the measured references. --cancel ends
the round going, keeping none of its figures.
"""

import time

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from exercises.calibration import rounds
from exercises.calibration.models import Calibration
from exercises.catalogue.models import BANDWIDTH_METRICS, MeasuredReference, SiteProfile
from exercises.catalogue.profiles import profile_for_command


def _keys(value: str | None) -> list[str] | None:
    return [key.strip() for key in value.split(",") if key.strip()] if value else None


class Command(BaseCommand):
    help = (
        "Run every exercise on every target of the site REPEAT times and keep the median, "
        "lowest and highest figure as the site's measured references."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--repeat", default="5", help=f"runs per exercise and target, 1 to "
            f"{rounds.MAX_REPEAT} (default 5)"
        )  # fmt: skip
        parser.add_argument(
            "--user", help="the portal login whose cluster account runs the jobs (required)"
        )
        parser.add_argument("--profile", help="the site profile (default: SITE_PROFILE)")
        parser.add_argument("--exercises", help="exercise keys, comma-separated (default: all)")
        parser.add_argument("--targets", help="target keys, comma-separated (default: all)")
        parser.add_argument("--wait", action="store_true", help="follow the round to its end")
        parser.add_argument(
            "--timeout", default="3600", help="with --wait: give up following after this "
            "many seconds (the round goes on); default 3600"
        )  # fmt: skip
        parser.add_argument(
            "--if-unmeasured", action="store_true", help="measure only the exercises that "
            "have no measured reference on some target, and nothing while a round is going "
            "(make demo's starts)"
        )  # fmt: skip
        parser.add_argument(
            "--first", help="exercise keys, comma-separated: a round of these first, then a "
            "round of the others it would measure (make demo: 1a,1b,2a,2b)"
        )  # fmt: skip
        parser.add_argument(
            "--first-repeat", help="with --first: runs per exercise and target of the first "
            "round; below --repeat, the round after it measures the first ones again, --repeat "
            "times (make demo: figures of the first exercises within minutes)"
        )  # fmt: skip
        parser.add_argument(
            "--cancel", action="store_true", help="cancel the profile's round going, as --user"
        )

    def handle(self, *args: object, **options: object) -> None:
        repeat = self._number(options["repeat"], "--repeat")
        timeout = self._number(options["timeout"], "--timeout")
        profile = profile_for_command(options["profile"])
        if options["cancel"]:
            self._cancel(profile, self._user(options["user"]))
            return
        exercise_keys = _keys(options["exercises"])
        target_keys = _keys(options["targets"])
        if options["if_unmeasured"]:
            if (going := rounds.current_round(profile)) is not None:
                self.stdout.write(
                    f"Calibration round {going.pk} of {profile.title} is going already; "
                    "nothing started."
                )
                return
            exercise_keys = rounds.unmeasured(profile, exercise_keys, target_keys)
            if not exercise_keys:
                self.stdout.write(
                    f"{profile.title} has measured references of every exercise on every "
                    "target already; nothing started."
                )
                return
        then: list[str] = []
        first_repeat = repeat
        if first := _keys(options["first"]):
            everything = exercise_keys or list(profile.exercises.values_list("key", flat=True))
            now = [key for key in everything if key in first]
            if options["first_repeat"]:
                first_repeat = self._number(options["first_repeat"], "--repeat")
            # A first round of fewer runs is measured again with the rest.
            then = [key for key in everything if key not in now or first_repeat < repeat]
            exercise_keys, then = (now, then) if now else (then, [])
        user = self._user(options["user"])
        try:
            round_ = rounds.start_round(
                user,
                profile,
                repeat=first_repeat,
                exercise_keys=exercise_keys,
                target_keys=target_keys,
                then_exercise_keys=then,
                then_repeat=repeat,
            )
        except rounds.CalibrationRefused as refused:
            raise CommandError(str(refused)) from None
        total = rounds.progress(round_).total
        after = (
            f" Then a round of {len(then)} exercise{'s' if len(then) != 1 else ''} "
            f"({', '.join(then)}), ×{repeat}, starts as it ends."
            if then
            else ""
        )
        self.stdout.write(
            f"Calibration round {round_.pk} of {profile.title} started: {total} runs as "
            f"{user.cluster_account.username}, at most {settings.CALIBRATION_PARALLEL} at a "
            f"time.{after}"
        )
        if not options["wait"]:
            self.stdout.write(
                "It goes on by itself (Celery beat and a worker carry it). Follow it on the "
                "portal's /lab/calibration/ page (instructors and staff see it), where its "
                "starter or staff can also cancel it."
            )
            return
        self._follow(round_, timeout)

    def _cancel(self, profile: SiteProfile, user) -> None:
        round_ = rounds.current_round(profile)
        if round_ is None:
            self.stdout.write(
                f"No calibration round of {profile.title} is going; nothing to cancel."
            )
            return
        try:
            left = rounds.cancel_round(round_.pk, user)
        except rounds.CalibrationRefused as refused:
            raise CommandError(str(refused)) from None
        tail = f"; {left} run(s) end by their time limit" if left else ""
        self.stdout.write(f"Calibration round {round_.pk} cancelled; no figure of it kept{tail}.")

    def _number(self, value: object, option: str) -> int:
        low, high = (1, rounds.MAX_REPEAT) if option == "--repeat" else (1, 86400)
        try:
            number = int(str(value))
        except ValueError:
            number = None
        if number is None or not low <= number <= high:
            raise CommandError(
                f"{option} takes a whole number from {low} to {high}, not {value!r}."
            )
        return number

    def _user(self, username: object):
        if not username:
            raise CommandError(
                "Say whose cluster account runs the jobs: --user NAME (a portal login "
                "with a linked cluster account)."
            )
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"No portal user {username!r}. Name an existing login with --user.")
        return user

    def _follow(self, round_: Calibration, timeout: int) -> None:
        deadline = time.monotonic() + timeout
        shown = None
        try:
            while True:
                round_ = rounds.advance(round_.pk)
                if round_.finished_at is not None:
                    break
                now = rounds.progress(round_)
                # A line per tenth of the round, not per run: rounds have hundreds.
                if now.ended * 10 // max(now.total, 1) != shown:
                    shown = now.ended * 10 // max(now.total, 1)
                    self.stdout.write(f"  {now.ended} of {now.total} runs ended, {now.going} going")
                if time.monotonic() > deadline:
                    raise CommandError(
                        f"Calibration round {round_.pk} is still going after {timeout} s. It "
                        "goes on by itself; follow it (or cancel it) on /lab/calibration/."
                    )
                time.sleep(2)
        except KeyboardInterrupt:
            raise CommandError(
                f"Stopped following calibration round {round_.pk}. It goes on by itself; "
                "follow it (or cancel it) on /lab/calibration/."
            ) from None
        self.stdout.write(round_.summary)
        measured = list(
            round_.measured.select_related("exercise", "target").order_by(
                "exercise__order", "exercise__key", "target__order", "target__key", "metric"
            )
        )
        if not measured:
            raise CommandError(f"Calibration round {round_.pk} kept no figure: see above.")
        self.stdout.write(self._table(measured))

    def _table(self, measured: list[MeasuredReference]) -> str:
        header = ("exercise", "target", "measures", "median", "low–high", "n", "unit")
        rows = [header] + [
            (
                m.exercise.key,
                m.target.name,
                m.get_metric_display(),
                f"{m.median:.1f}",
                f"{m.low:.1f}–{m.high:.1f}",
                str(len(m.values)),
                "MiB/s" if m.metric in BANDWIDTH_METRICS else "ops/s",
            )
            for m in measured
        ]
        widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
        numeric = {3, 4, 5}
        return "\n".join(
            "  ".join(
                cell.rjust(widths[i]) if i in numeric else cell.ljust(widths[i])
                for i, cell in enumerate(row)
            ).rstrip()
            for row in rows
        )

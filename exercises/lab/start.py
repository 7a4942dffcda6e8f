"""Starting runs of an exercise: the rules every caller goes through.

`start_runs` saves `repeat` runs per chosen target, or none at all, and raises
StartRefused with what to tell the user. The lab's rules, in this order:

1. every target is one of the exercise's site, and the repeat one of REPEATS;
2. the user has a cluster account (jobs run as it);
3. one click, one start: a click that started runs already starts nothing (the
   form's click token); and when the caller says a person clicked, a start of the
   exercise on a target the user started it on within START_AGAIN_SECONDS starts
   nothing and asks (StartAgain): a browser's double click sends its second click
   after the first one's answer when the portal answers fast, with the new token;
4. each run counts for the first open course the user joined that teaches this
   exercise on that target; a course that asks for predictions first refuses the
   first run of an exercise the user has not predicted;
5. then the rules every run of the portal passes (jobs/admission.py: admit): the
   run's files fit in what is left of the user's quota on each target (the check
   itself: exercises/quotas/checks.py); the runs that fit in the user's free slots
   (MAX_ACTIVE_RUNS_PER_USER, and each course's cap per trainee) start, the others
   wait for a free slot and start by themselves, in order, as the user's runs end
   (jobs/slots.py); at most MAX_WAITING_RUNS_PER_USER may wait.

Runs are saved in the order target A, target B, ..., then the repeats, so that
every target gets its first figure early. The rules are checked and the runs saved
in one transaction, holding the user's cluster account row: two clicks at once
cannot both take the same free slot.
"""

from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Exists, QuerySet
from django.utils import timezone

from exercises.catalogue.models import Exercise, StorageTarget
from exercises.courses import access
from exercises.predictions.rules import first_run_held
from jobs.admission import Refused, admit
from jobs.models import BenchmarkRun
from jobs.submission import new_run, start_run
from portal.models import ClusterAccount

# How many runs of each chosen target one click may ask for.
REPEATS = (1, 3, 5)


class StartRefused(Exception):
    """No run was started; the message says why and what to do."""


class StartAgain(StartRefused):
    """No run was started: the same runs started a moment ago, and the user is asked
    whether to start them again (a double click, or a second tab)."""


def start_runs(
    user: AbstractBaseUser,
    exercise: Exercise,
    targets: list[StorageTarget],
    repeat: int = 1,
    click: str = "",
    ask_if_repeated: bool = False,
) -> list[BenchmarkRun]:
    """`repeat` runs of `exercise` on each of `targets` (queued, or waiting for a
    slot), or StartRefused. `click` names the form's click: a click that started runs
    already starts nothing (a double click, a form sent again). `ask_if_repeated`: a
    person clicked, and has not yet said "start them again" (StartAgain)."""
    if not targets:
        raise StartRefused("Choose at least one storage target to run the exercise on.")
    foreign = [t.name for t in targets if t.profile_id != exercise.profile_id]
    if foreign:
        raise StartRefused(
            f"{', '.join(foreign)} is not a storage target of {exercise.profile.title}."
        )
    if repeat not in REPEATS:
        raise StartRefused(f"Runs repeat {', '.join(map(str, REPEATS))} times, not {repeat}.")
    with transaction.atomic():
        accounts = ClusterAccount.objects.select_for_update().filter(user=user)
        if ask_if_repeated:  # in the same query: a start's queries stay as they were
            recent = _just_started(user, exercise, targets)
            accounts = accounts.annotate(just_started=Exists(recent))
        account = accounts.first()
        if account is None:
            raise StartRefused(
                "Your portal login has no cluster account, so no job can run for you. "
                "Ask your instructor or the HPC support team to link one."
            )
        if click and click == account.last_click:
            raise StartRefused(
                "These runs were started by your first click already: they are listed "
                "below. Click Start runs again to start more."
            )
        if ask_if_repeated and account.just_started:
            _ask_again(user, exercise, targets)
        course_for = access.open_courses_for(user, exercise, targets)
        if first_run_held(user, exercise, course_for.values()):
            raise StartRefused(PREDICT_FIRST)
        runs = [
            exercise_run(account, exercise, target, course=course_for[target.pk], waiting=True)
            for _ in range(repeat)
            for target in targets
        ]
        try:
            # The queued ones as their enqueueing holds them (admitted or promoted):
            # the page reads what it said (a broker outage) once this is committed.
            started = admit(account, runs, account_held=True)
        except Refused as refused:
            raise StartRefused(str(refused)) from None
        if click:
            ClusterAccount.objects.filter(pk=account.pk).update(last_click=click)
        return started


def start_exercise_run(
    account: ClusterAccount, exercise: Exercise, target: StorageTarget, **run: object
) -> BenchmarkRun:
    """One run of `exercise` on `target` as `account`, saved and queued (start_run);
    `run` adds its course or calibration."""
    return start_run(account, target, exercise.workload, **_of_exercise(exercise), **run)


def exercise_run(
    account: ClusterAccount, exercise: Exercise, target: StorageTarget, **run: object
) -> BenchmarkRun:
    """The same, not yet saved (new_run): the lab saves a click's runs at once."""
    return new_run(account, target, exercise.workload, **_of_exercise(exercise), **run)


def _of_exercise(exercise: Exercise) -> dict:
    """What a run takes from its exercise: its engine, time limit and files' layout,
    and itself."""
    return {
        "engine": exercise.runs_with,
        "time_limit_minutes": exercise.time_limit_minutes,
        "exercise": exercise,
        "spread": exercise.spread,
    }


def _just_started(
    user: AbstractBaseUser, exercise: Exercise, targets: list[StorageTarget]
) -> QuerySet[BenchmarkRun]:
    """The user's runs of `exercise` on `targets` started within START_AGAIN_SECONDS."""
    since = timezone.now() - timedelta(seconds=settings.START_AGAIN_SECONDS)
    return BenchmarkRun.objects.filter(
        user=user, exercise=exercise, calibration=None, target__in=targets, created_at__gte=since
    )


def _ask_again(user: AbstractBaseUser, exercise: Exercise, targets: list[StorageTarget]) -> None:
    """StartAgain, naming the targets started just now and when (1 query)."""
    started = _just_started(user, exercise, targets).order_by("created_at")
    when: dict[str, datetime] = {}
    for name, created_at in started.values_list("target__name", "created_at"):
        when.setdefault(name, created_at)
    seconds = round((timezone.now() - min(when.values(), default=timezone.now())).total_seconds())
    ago = "a moment ago" if seconds < 2 else f"{seconds} s ago"
    them = "it" if len(when) == 1 else "them"
    raise StartAgain(
        f"You started {exercise.key} on {', '.join(when)} {ago}: those runs are listed "
        f"below, and this click started nothing. Start {them} once more?"
    )


# A first run that a course holds back (exercises/predictions/rules.py: first_run_held).
PREDICT_FIRST = (
    'Your course asks you to predict first: rank the targets under "Your prediction" '
    "on this page (which will be fastest?), then start the runs."
)

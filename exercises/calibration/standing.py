"""Where a site's calibration rounds stand, for the pages below the calibration that
show its figures (exercises/catalogue/measuring.py; registered in apps.py): the round
going, how far it is and about how long it has left, the round that follows it, and
the last finished round."""

import math

from django.db.models import F
from django.utils import timezone

from exercises.calibration import plans, rounds
from exercises.calibration.models import Calibration
from exercises.catalogue.measuring import Round, Standing

# Runs ended before a round's own pace is believed over the plan's guess.
PACE_AFTER = 3


def standing(profile_id: int) -> Standing:
    """(1 query, and 1 to 3 more while a round goes)"""
    # The round going (not finished: first), then the last one finished.
    latest = list(
        Calibration.objects.filter(profile_id=profile_id).order_by(
            F("finished_at").desc(nulls_first=True)
        )[:2]
    )
    going = latest.pop(0) if latest and latest[0].finished_at is None else None
    finished = latest[0] if latest and latest[0].finished_at is not None else None
    return Standing(
        going=_going(going) if going else None,
        finished=_finished(finished) if finished else None,
        finished_at=finished.finished_at if finished else None,
    )


def _finished(calibration: Calibration) -> Round:
    planned = len(calibration.exercise_keys) * len(calibration.target_keys) * calibration.repeat
    return Round(
        number=calibration.pk,
        exercises=frozenset(calibration.exercise_keys),
        targets=frozenset(calibration.target_keys),
        runs=planned,
        ended=planned,
        minutes_left=0,
    )


def _going(calibration: Calibration) -> Round:
    now = rounds.progress(calibration)
    left = now.total - now.ended
    elapsed = (timezone.now() - calibration.started_at).total_seconds()
    if now.ended >= PACE_AFTER and elapsed > 0:
        per_run = elapsed / now.ended  # the round's own pace, its parallel runs counted
    else:
        pairs = rounds.planned_pairs(calibration)
        exercises = list(dict.fromkeys(e for e, _ in pairs))
        targets = list(dict.fromkeys(t for _, t in pairs))
        plan = plans.plan(exercises, targets, calibration.repeat) if pairs else None
        per_run = plan.minutes * 60 / max(now.total, 1) if plan else None
    then = frozenset(calibration.then_exercise_keys)
    then_runs = (
        len(then) * len(calibration.target_keys) * (calibration.then_repeat or calibration.repeat)
    )
    minutes = math.ceil(per_run * left / 60) if per_run else None
    return Round(
        number=calibration.pk,
        exercises=frozenset(calibration.exercise_keys),
        targets=frozenset(calibration.target_keys),
        runs=now.total,
        ended=now.ended,
        minutes_left=max(minutes, 1) if minutes is not None else None,
        then=then,
        # At this round's pace: the next one's exercises differ, the best guess there is.
        then_minutes=math.ceil(per_run * (left + then_runs) / 60) if per_run and then else None,
    )

"""The lesson check: each exercise's claims (exercises/catalogue/lessons.py) against single runs
on the live dev cluster, one run at a time, as a trainee's runs would give them.
`make bench` counts ten rounds (bench/test_lessons.py); the live test a second chance
at most (tests/exercises/lab/test_lessons_live.py)."""

from dataclasses import dataclass

from exercises.catalogue import lessons
from exercises.catalogue.models import Exercise, SiteProfile, StorageTarget
from exercises.lab.start import start_exercise_run
from jobs.models import RunStatus
from portal.models import ClusterAccount
from tests.runs import follow

Round = dict[lessons.Side, float | None]  # each side's MiB/s in one round, None: no figure


def claims(profile: SiteProfile) -> list[lessons.Claim]:
    return [c for e in profile.exercises.all() for c in lessons.claims_of(e)]


def run_round(profile: SiteProfile, account: ClusterAccount, sides: set[lessons.Side]) -> Round:
    """One run of each side, one after the other, in the site's order of exercises and
    targets."""
    exercises: dict[str, Exercise] = {e.key: e for e in profile.exercises.all()}
    targets: dict[str, StorageTarget] = {t.key: t for t in profile.targets.all()}
    order = {key: i for i, key in enumerate(exercises)}
    place = {key: i for i, key in enumerate(targets)}
    figures: Round = {}
    # A sweep's sizes are one run's figures: one run per exercise and target.
    for one in sorted({s.run for s in sides}, key=lambda s: (order[s.exercise], place[s.target])):
        run = start_exercise_run(account, exercises[one.exercise], targets[one.target])
        (run,) = follow(run, timeout=120)
        done = run.status == RunStatus.COMPLETED and hasattr(run, "result")
        for side in (s for s in sides if s.run == one):
            figures[side] = (
                side.figure(run.result.write_mib_s, dict(run.result.series_mib_s), run.result.space)
                if done
                else None
            )
    return figures


@dataclass
class Tally:
    claim: lessons.Claim
    held: int = 0
    of: int = 0
    ratios: tuple[float | None, ...] = ()

    @property
    def line(self) -> str:
        ratios = ", ".join("–" if r is None else f"{r:.2f}" for r in self.ratios)
        c = self.claim
        how = f"within {c.within:g}× of" if c.within else f"≥ {c.factor:g}×"
        return f"{c.faster} {how} {c.slower}: {self.held} of {self.of} runs (ratios {ratios})"


def tally(all_claims: list[lessons.Claim], rounds: list[Round]) -> list[Tally]:
    found = []
    for claim in all_claims:
        verdicts = [lessons.judge([claim], r.get)[0] for r in rounds]
        found.append(
            Tally(
                claim,
                held=sum(v.holds is True for v in verdicts),
                of=len(verdicts),
                ratios=tuple(v.ratio for v in verdicts),
            )
        )
    return found

"""Predicting an exercise against another: where an exercise's lesson sets it beside
another exercise on the same target (8b against 8a on $WORK, 10b against 10a,
11a against 11b on $PROJECT), the trainee may say before the first run whether it
will be faster, about as fast, or slower. Their latest runs answer on the lab's page
(the figures the lesson reads), and the class's medians on the course's overview."""

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Self

from exercises.catalogue import lessons
from portal.units import ratio_as_shown, times

# What a trainee may answer, as the page says each.
ANSWERS = {"faster": "faster than", "same": "about as fast as", "slower": "slower than"}
# Two figures within this factor of each other are "about as fast", unless the lesson
# says its own (a claim's `within`: 10d's 1.5).
SAME_WITHIN = 1.25


@dataclass(frozen=True)
class Versus:
    """`exercise` on `target` against `other` on the same target, from `claim`."""

    exercise: str
    other: str
    target: str
    within: float
    claim: lessons.Claim

    @property
    def key(self) -> str:
        """As a prediction keeps its answer: the other side, "8a/work"."""
        return f"{self.other}/{self.target}"

    def sides(self, fast: float | None, slow: float | None) -> tuple[float | None, float | None]:
        """(this exercise's figure, the other's) from the claim's (faster, slower)."""
        mine_first = self.claim.faster.exercise == self.exercise
        return (fast, slow) if mine_first else (slow, fast)

    def answer(self, mine: float | None, other: float | None) -> str | None:
        """What two figures say: faster, same or slower; None without both. Of the
        figures as the page shows them, so that the word agrees with the ratio beside it."""
        if not mine or not other:
            return None
        ratio = ratio_as_shown(mine, other)
        if 1 / self.within <= ratio <= self.within:
            return "same"
        return "faster" if ratio > 1 else "slower"


def questions(exercise: Any) -> list[Versus]:
    """The exercise's questions against other exercises: one per claim that sets it
    beside another exercise's speed on the same target, once per pair."""
    found: dict[str, Versus] = {}
    for claim in lessons.claims_of(exercise):
        sides = {claim.faster, claim.slower}
        if any(s.size or s.space for s in sides) or claim.faster.target != claim.slower.target:
            continue
        others = {s.exercise for s in sides} - {exercise.key}
        if len(others) != 1 or exercise.key not in {s.exercise for s in sides}:
            continue
        (other,) = others
        versus = Versus(
            exercise.key, other, claim.faster.target, claim.within or SAME_WITHIN, claim
        )
        found.setdefault(versus.key, versus)
    return list(found.values())


@dataclass(frozen=True)
class Measured:
    """One question's two figures (MiB/s) and what they say."""

    subject: str  # "8b on $WORK"
    other: str  # "8a"
    mine: float | None  # this exercise's figure on the target, and the other's
    other_mib_s: float | None
    measured: str | None  # an ANSWERS key; None: not both measured yet
    within: float = SAME_WITHIN  # about as fast: neither more than this times the other

    @classmethod
    def of(
        cls,
        versus: Versus,
        names: Mapping[str, str],
        mine: float | None,
        other: float | None,
        **rest: Any,
    ) -> Self:
        """`versus` with these figures; `rest`: the fields of a kind of its own."""
        target = names.get(versus.target, versus.target)
        return cls(
            subject=f"{versus.exercise} on {target}",
            other=versus.other,
            mine=mine,
            other_mib_s=other,
            measured=versus.answer(mine, other),
            within=versus.within,
            **rest,
        )

    @property
    def measured_words(self) -> str:
        return ANSWERS.get(self.measured or "", "")

    @property
    def ratio(self) -> str:
        return times(ratio_as_shown(self.mine, self.other_mib_s)) if self.measured else "–"


@dataclass(frozen=True)
class Said(Measured):
    """What the trainee expected of one question, beside their latest runs."""

    expected: str = ""  # an ANSWERS key

    @property
    def right(self) -> bool | None:
        return None if self.measured is None else self.measured == self.expected

    @property
    def expected_words(self) -> str:
        return ANSWERS[self.expected]


def said(
    asked: list[Versus],
    against: Mapping[str, str],
    verdicts: list[lessons.Verdict],
    names: Mapping[str, str],
) -> list[Said]:
    """Each answered question beside the lesson's verdicts (my latest runs' figures of
    each claim's sides)."""
    by_claim = {v.claim: v for v in verdicts}
    found = []
    for versus in asked:
        if versus.key not in against:
            continue
        verdict = by_claim.get(versus.claim)
        mine, other = versus.sides(verdict.fast, verdict.slow) if verdict else (None, None)
        found.append(Said.of(versus, names, mine, other, expected=against[versus.key]))
    return found


@dataclass(frozen=True)
class ClassSaid(Measured):
    """How a class answered one question, beside its medians."""

    counts: tuple[tuple[str, str, int], ...] = ()  # (ANSWERS key, its words, how many)
    voters: int = 0

    @property
    def expected(self) -> str:
        """ "12 expected it faster than 8a; 3 expected it about as fast as 8a"."""
        return "; ".join(
            f"{n} expected it {words} {self.other}" for _, words, n in self.counts if n
        )


def class_said(
    asked: list[Versus],
    answers: list[Mapping[str, str]],
    medians: Mapping[tuple[str, str], float | None],
    names: Mapping[str, str],
) -> list[ClassSaid]:
    """Per question some trainee answered: the class's answers (`answers`: each
    prediction's), and its medians ((exercise key, target key) -> MiB/s)."""
    found = []
    for versus in asked:
        given = Counter(a[versus.key] for a in answers if a.get(versus.key) in ANSWERS)
        if not given:
            continue
        mine = medians.get((versus.exercise, versus.target))
        other = medians.get((versus.other, versus.target))
        counts = tuple((a, words, given[a]) for a, words in ANSWERS.items())
        found.append(
            ClassSaid.of(versus, names, mine, other, counts=counts, voters=sum(given.values()))
        )
    return found

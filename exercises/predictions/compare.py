"""What a trainee's measured runs say of their prediction: each pair of targets the
runs put the other way round, with the medians that did it."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Miss:
    """The trainee expected `expected` to beat `beaten`; the runs said otherwise."""

    expected: str  # target names
    beaten: str
    expected_mib_s: float
    beaten_mib_s: float


def misses(order: list[str], medians: dict[str, float]) -> list[Miss]:
    """Every pair the prediction (target names, fastest first) ranks one way and the
    medians (MiB/s by target name, measured targets only) the other, the prediction's
    order kept. Targets not measured yet are left out."""
    measured = [name for name in order if medians.get(name)]
    return [
        Miss(a, b, medians[a], medians[b])
        for i, a in enumerate(measured)
        for b in measured[i + 1 :]
        if medians[b] > medians[a]
    ]


@dataclass(frozen=True)
class Guess:
    """The MiB/s the trainee expected of a target, beside the median of their runs."""

    target: str  # its name
    guessed_mib_s: float
    measured_mib_s: float

    @property
    def factor(self) -> float:
        """How many times off, whichever way: guesses are on a log scale."""
        low, high = sorted((self.guessed_mib_s, self.measured_mib_s))
        return high / low

    @property
    def words(self) -> str:
        if self.factor < CLOSE_FACTOR:
            return "close (within 2×)"
        way = "high" if self.guessed_mib_s > self.measured_mib_s else "low"
        return f"{self.factor:,.0f}× too {way}"


# A guess within this factor of the measurement is close: the guesses' scale steps
# by about 3.
CLOSE_FACTOR = 2


@dataclass
class Outcome:
    """A prediction beside the runs so far: its order (target names, fastest first),
    how many of its targets have a figure, the pairs the runs turned round, and the
    figures guessed of measured targets."""

    order: list[str]
    measured: int
    misses: list[Miss]
    guesses: list[Guess]


def outcome(
    order_keys: list[str],
    names: dict[str, str],
    medians: dict[str, float],
    guessed: dict[str, float] | None = None,
) -> Outcome:
    """`order_keys`: the prediction's target keys; `names`: key -> name of the site's
    targets; `medians`: name -> the median MiB/s of the trainee's runs; `guessed`:
    key -> the MiB/s the trainee expected, where they gave one."""
    order = names_of(order_keys, names)
    guesses = [
        Guess(names[key], float(guessed[key]), medians[names[key]])
        for key in order_keys
        if key in names and (guessed or {}).get(key) and medians.get(names[key])
    ]
    return Outcome(order, sum(1 for n in order if medians.get(n)), misses(order, medians), guesses)


def names_of(keys: list[str], names: dict[str, str]) -> list[str]:
    """The names of the targets `keys` that the site still has, in their order."""
    return [names[key] for key in keys if key in names]

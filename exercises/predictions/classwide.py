"""How a class predicted an exercise, beside what it measured: for each pair of the
course's targets, how many expected which to be faster, and which the class's medians
put first. The projector and the instructor's overview show it."""

from dataclasses import dataclass

from portal.units import ratio_as_shown, times


@dataclass(frozen=True)
class Pair:
    """`share` of the `voters` who ranked both expected `expected` to beat `other`;
    the class's medians (MiB/s, None: not measured yet) of each."""

    expected: str  # target names
    other: str
    share: float
    voters: int
    expected_mib_s: float | None
    other_mib_s: float | None

    @property
    def measured(self) -> bool:
        return bool(self.expected_mib_s and self.other_mib_s)

    @property
    def split(self) -> bool:
        """Half expected one, half the other: no side is most of the class."""
        return self.share == 0.5

    @property
    def right(self) -> bool | None:
        """Whether the class's medians agree with most of the class; None unmeasured
        or split evenly."""
        if not self.measured or self.split:
            return None
        return self.expected_mib_s >= self.other_mib_s

    @property
    def faster(self) -> str:
        """The target the class measured faster (measured pairs only)."""
        return self.expected if self.expected_mib_s >= self.other_mib_s else self.other

    @property
    def faster_mib_s(self) -> float:
        return max(self.expected_mib_s, self.other_mib_s)

    @property
    def slower_mib_s(self) -> float:
        return min(self.expected_mib_s, self.other_mib_s)

    @property
    def ratio(self) -> float | None:
        """How many times faster the faster of the two measured."""
        if not self.measured:
            return None
        return ratio_as_shown(self.faster_mib_s, self.slower_mib_s)

    @property
    def times(self) -> str:
        """ "9.8×", as the lab page's lessons write a ratio."""
        return times(self.ratio)


@dataclass(frozen=True)
class ClassPrediction:
    count: int  # predictions of the class
    fastest: list[tuple[str, float]]  # target name, share who put it first
    pairs: list[Pair]  # most of the class wrong first, then split, then by how sure it was


def summary(
    orders: list[list[str]], targets: list[tuple[str, str]], medians: dict[str, float | None]
) -> ClassPrediction | None:
    """`orders`: the class's predictions (target keys, fastest first); `targets`: the
    course's (key, name) in its order; `medians`: key -> the class's median MiB/s.
    None when nobody predicted."""
    if not orders:
        return None
    names = dict(targets)
    places = [{key: i for i, key in enumerate(order)} for order in orders]
    firsts = [order[0] for order in orders if order and order[0] in names]
    fastest = [
        (name, firsts.count(key) / len(firsts)) for key, name in targets if firsts.count(key)
    ]
    fastest.sort(key=lambda kv: -kv[1])
    pairs = []
    for i, (a, _) in enumerate(targets):
        for b, _ in targets[i + 1 :]:
            ranked = [p for p in places if a in p and b in p]
            if not ranked:
                continue
            a_first = sum(1 for p in ranked if p[a] < p[b]) / len(ranked)
            x, y = (a, b) if a_first >= 0.5 else (b, a)
            pairs.append(
                Pair(
                    expected=names[x],
                    other=names[y],
                    share=max(a_first, 1 - a_first),
                    voters=len(ranked),
                    expected_mib_s=medians.get(x),
                    other_mib_s=medians.get(y),
                )
            )
    pairs.sort(key=lambda p: (p.right is not False, not p.split, -p.share))
    return ClassPrediction(len(orders), fastest, pairs)

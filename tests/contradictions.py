"""Sentences a page shows that the figures on the same page deny (issue 57's count).

A lab page states outcomes in four places, each marked (templates/lab/exercise_detail.html,
`data-says`): a claim's line ("they show it"), a finding ("collective calls won"),
an answer to a prediction against another exercise ("faster than 8a"), and a
prediction the runs put the other way round. Each prints its figures beside its words:
this reads the figures as printed, works out their ratio, and checks that the ratio
printed, and the words, agree with it. Any other sentence of the page that states an
outcome (exercises/catalogue/outcomes.py) is held by nothing: it counts too.

Pure text: the bench reads each trainee's page with it, the e2e tests a page they
look at, and tests/test_contradictions.py proves it finds what it should."""

import re
from dataclasses import dataclass
from html.parser import HTMLParser

from exercises.catalogue.outcomes import outcome_words, sentences
from portal.units import times

UNITS = {"MiB/s": 1.0, "B": 1 / 2**20, "KiB": 1 / 2**10, "MiB": 1.0, "GiB": 2**10, "TiB": 2**20}
# A figure as pages print them: a speed ("9,029.5 MiB/s"), a space ("56.1 MiB stored";
# a request size, "at 4 KiB", is neither), and a ratio ("(1.7×)").
SPEED = re.compile(r"(\d[\d,]*(?:\.\d+)?) (MiB/s)")
SPACE = re.compile(r"(\d[\d,]*(?:\.\d+)?) (B|KiB|MiB|GiB|TiB) (?:written|stored|held)")
FIGURE = re.compile(f"{SPEED.pattern}|{SPACE.pattern}")
RATIO = re.compile(r"\(([\d,]+(?:\.\d)?)×\)")
# Elements whose text is not the page's prose: scripts, and the chart's data.
SILENT = {"script", "style", "template", "canvas"}


@dataclass
class Marked:
    """An element that states an outcome beside its figures (data-says)."""

    says: str  # claim, finding, against, miss
    attrs: dict[str, str]
    text: str = ""


class Page(HTMLParser):
    """The page's marked elements with their text, and the rest of its visible text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.marked: list[Marked] = []
        self.prose: list[str] = []
        self._stack: list[tuple[str, Marked | None]] = []
        self._silent = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        if tag in {"br", "img", "input", "meta", "link", "hr", "wbr", "source"}:
            if tag == "br":
                self._text(" ")
            return
        mark = Marked(found["data-says"], found) if "data-says" in found else None
        if mark:
            self.marked.append(mark)
        self._stack.append((tag, mark))
        if tag in SILENT:
            self._silent += 1
        if tag in {"p", "li", "td", "th", "h1", "h2", "h3", "div", "caption", "label"}:
            self._text("\n")

    def handle_endtag(self, tag: str) -> None:
        while self._stack:
            open_tag, _ = self._stack.pop()
            if open_tag in SILENT:
                self._silent -= 1
            if open_tag == tag:
                break
        if tag in {"p", "li", "td", "th", "h1", "h2", "h3", "div", "caption", "label"}:
            self._text("\n")

    def handle_data(self, data: str) -> None:
        if not self._silent:
            self._text(data)

    def _text(self, data: str) -> None:
        inside = next((mark for _, mark in reversed(self._stack) if mark), None)
        if inside is not None:
            inside.text += data
        else:
            self.prose.append(data)


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def readings(text: str) -> list[tuple[float, float, str, str]]:
    """Each "(R×)" of `text`, with the two figures printed before it (in MiB/s or MiB)
    and the words after it up to the next figure: (a, b, R as printed, words)."""
    found = []
    start = 0
    for ratio in RATIO.finditer(text):
        before = text[start : ratio.start()]
        figures = SPEED.findall(before)
        if len(figures) < 2:
            figures = SPACE.findall(before)
        after = text[ratio.end() :]
        nxt = FIGURE.search(after)
        words = after[: nxt.start()] if nxt else after
        if len(figures) >= 2:
            (a, ua), (b, ub) = figures[-2:]
            found.append((_number(a) * UNITS[ua], _number(b) * UNITS[ub], ratio.group(1), words))
        start = ratio.end()
    return found


def _same_print(a: float, b: float, printed: str) -> bool:
    """Whether `printed` is the ratio of the figures as printed."""
    return b > 0 and times(a / b) == f"{printed}×"


def _way(ratio: float, within: float) -> str:
    if ratio > within:
        return "higher"
    if ratio < 1 / within:
        return "lower"
    return "alike"


def denied(mark: Marked) -> list[str]:
    """What the figures in `mark` deny of its words ([] for nothing)."""
    problems = []
    said = " ".join(mark.text.split())
    for a, b, printed, words in readings(said):
        if not _same_print(a, b, printed):
            problems.append(f"{printed}× printed beside {a:g} and {b:g}: {said}")
            continue
        ratio = a / b
        if mark.says == "claim":
            within = float(mark.attrs["data-within"]) if "data-within" in mark.attrs else None
            needs = float(mark.attrs.get("data-needs") or 1)
            holds = (1 / within <= ratio <= within) if within else ratio >= needs
            if "they show it" in words and not holds:
                problems.append(f"says 'they show it' at {printed}×: {said}")
            if "they do not show it" in words and holds:
                problems.append(f"says 'they do not show it' at {printed}×: {said}")
        elif mark.says == "against":
            within = float(mark.attrs.get("data-within") or 1.25)
            way = {"higher": "faster than", "alike": "about as fast as", "lower": "slower than"}
            if way[_way(ratio, within)] not in words:
                problems.append(
                    f"words other than {way[_way(ratio, within)]!r} at {printed}×: {said}"
                )
    if mark.says == "finding" and mark.attrs.get("data-way"):
        within = float(mark.attrs.get("data-within") or 1.25)
        first = readings(said)[:1]
        if first and _way(first[0][0] / first[0][1], within) != mark.attrs["data-way"]:
            problems.append(f"its sentence is the {mark.attrs['data-way']} one: {said}")
    if mark.says == "miss":
        figures = SPEED.findall(said)
        # "You expected X to beat Y: Y wrote b MiB/s, X a." : the beaten one wrote more.
        if len(figures) >= 2 and _number(figures[0][0]) < _number(figures[1][0]):
            problems.append(f"a miss whose figures agree with the guess: {said}")
    return problems


def contradictions(html: str) -> list[str]:
    """Every sentence of the page that its own figures deny, or that states an
    outcome no marked figures hold; [] for a page that says only what it shows."""
    page = Page()
    page.feed(html)
    problems = [problem for mark in page.marked for problem in denied(mark)]
    for chunk in "".join(page.prose).split("\n"):
        for sentence in sentences(" ".join(chunk.split())):
            if words := outcome_words(sentence):
                problems.append(f"states {', '.join(words)} held by no figure: {sentence}")
    return problems

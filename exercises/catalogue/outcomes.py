"""Which sentences of a profile state an outcome, and the rule that holds them to figures.

A trainee must never read a sentence that the figures in front of them deny. A sentence
that states an outcome (X is faster or slower than Y, gains, loses, scales, "costs
nothing", "no trip to save") is allowed in a profile's prose only where a figure holds
it:

- it is a claim's text (lessons.py): the lesson bench checks that single runs show it,
  and the lab tells each trainee whether theirs do;
- it is one of a finding's sentences (findings.py): the page picks the one the
  trainee's latest figures, else the site's quiet figures, support, and shows them;
- it is an open question or an indirect one ("Did ... gain?", "See which targets
  speed up"), which presupposes no outcome.

Everything else a profile says (how a target is built, what an exercise measures, how
to read its figures, what to discuss) must state no outcome. `load_site_profile`
refuses a profile that does, naming the exercise or target and the words
(`check`). The words are found by a list (OUTCOME), not understood: the list is the
house's agreement on what states an outcome, and grows when a review finds a sentence
it missed.
"""

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

# Words and phrases that state how one figure stands to another, or how a figure
# moves. "scale" alone is left out: a chart's log scale is no outcome.
OUTCOME = re.compile(
    r"\b("
    # "fastest first" orders a list (a prediction), it states nothing.
    r"faster|fastest(?! first)|slower|slowest|quicker|quickest"
    r"|gain|gains|gained|gaining"
    # To lose data is no outcome of a figure: "a crash can lose what it holds".
    r"|(?:lose|loses|losing)(?!\s+(?:or\s+\w+\s+)?(?:data|what|files|it\b|them|results))"
    r"|(?<!\ba )lost(?!\s+(?:if|when|in|on|with|for)\b)"
    r"|wins?|won|winning"
    r"|scales|scaled|scaling"
    r"|speeds? up|sped up|speed-?ups?"
    r"|beats?|beaten|outperforms?|outruns?"
    r"|crawls?|crawling"
    r"|costs? nothing|no trip to save|barely cares?|next to nothing|pays? off"
    r"|close to 1|far below|far above|well below|well above"
    r"|should (?:land|match|be close)|the drop|flat from|flattens|levels off|hides? most"
    r"|hardly|barely"
    r"|as fast as|better than|worse than|more than twice|twice as"
    r"|\d+(?:\.\d+)?\s*(?:×|x|times) (?:as fast|faster|slower|more|less)"
    r")\b",
    re.IGNORECASE,
)
# A direct question that opens with one of these asks for the outcome instead of
# presupposing it ("Did collective I/O win?", "Which target scaled?"). "Why" and
# "How much" take the outcome as given ("Why does collective I/O lose?").
OPEN_QUESTION = re.compile(
    r"^((?:at|on|in|for|from|with|to) (?:which|what)|"
    r"did|does|do|was|were|is|are|will|would|could|can|which|where|what|who|when|if|"
    r"how did|how do|how does|how would|how could|how can|how close|how far apart)\b",
    re.IGNORECASE,
)
PRESUPPOSING = re.compile(r"^(why|how much|how many times)\b", re.IGNORECASE)
# An indirect question before the outcome word leaves it open: "See which targets speed
# up", "Find out whether more processes gain" (a relative "which" opens nothing: "the
# disk, which is shared, loses").
INDIRECT = re.compile(
    r"\b(?:see|find out|check|ask|tell|tells|show|shows|learn|judge|say|says|wonder)"
    r"\s+(?:whether|which|if)\b",
    re.IGNORECASE,
)
# Sentences end at . ! ? before a space and a capital, a $ or a quote; "e.g." and
# figures such as "1.6 MiB/s" do not end one.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z$\"'(])")
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "cf.")


def sentences(text: str) -> list[str]:
    """`text` cut into sentences (good enough for prose written for people)."""
    parts: list[str] = []
    for piece in _SENTENCE_END.split(text.strip()):
        if parts and parts[-1].lower().endswith(_ABBREVIATIONS):
            parts[-1] = f"{parts[-1]} {piece}"
        elif piece:
            parts.append(piece)
    return parts


def outcome_words(sentence: str) -> list[str]:
    """The outcome words of `sentence` that no question leaves open; [] for none."""
    found = list(OUTCOME.finditer(sentence))
    if not found:
        return []
    stripped = sentence.strip()
    if (
        stripped.endswith("?")
        and OPEN_QUESTION.match(stripped)
        and not PRESUPPOSING.match(stripped)
    ):
        return []
    first = found[0].start()
    if INDIRECT.search(sentence[:first]) and not PRESUPPOSING.match(stripped):
        return []
    return [m.group(0) for m in found]


@dataclass(frozen=True)
class Stated:
    """A sentence of a profile that states an outcome no figure holds."""

    where: str  # "exercise '8b', how_to_read"
    sentence: str
    words: tuple[str, ...]

    def __str__(self) -> str:
        words = ", ".join(f"{w!r}" for w in dict.fromkeys(self.words))
        return (
            f"{self.where} states an outcome ({words}) that no figure holds: "
            f'"{self.sentence}". Make it a claim (checked by the lesson bench), a finding '
            "(its words chosen from the figures), or say it without the outcome."
        )


# The fields of a profile that trainees read as prose.
TARGET_PROSE = (
    "summary",
    "hardware",
    "peak_speed",
    "redundancy",
    "size",
    "default_quota",
    "purge_policy",
    "filesystem",
    "use_for",
    "avoid_for",
)
EXERCISE_PROSE = ("title", "goal", "measures", "how_to_read", "questions")


def stated(where: str, text: object, held: set[str]) -> Iterator[Stated]:
    """The sentences of `text` (a string or a list of them) that state an outcome and
    are not in `held` (the claims' and findings' own sentences)."""
    items = text if isinstance(text, list) else [text]
    for item in items:
        if not isinstance(item, str):
            continue
        for sentence in sentences(item):
            if sentence.strip() in held:
                continue
            if words := outcome_words(sentence):
                yield Stated(where, sentence, tuple(words))


def unheld(data: dict, held: Iterable[str] = ()) -> list[Stated]:
    """Every sentence of the profile `data` (its TOML, parsed) that states an outcome no
    figure holds. `held`: sentences a claim or a finding carries, which may."""
    kept = {s.strip() for text in held for s in sentences(text)}
    found: list[Stated] = []
    head = data.get("profile", {})
    found += stated("the profile's description", head.get("description", ""), kept)
    for target in data.get("targets", []):
        for field in TARGET_PROSE:
            where = f"target {target.get('key')!r}, {field}"
            found += stated(where, target.get(field, ""), kept)
    for exercise in data.get("exercises", []):
        for field in EXERCISE_PROSE:
            where = f"exercise {exercise.get('key')!r}, {field}"
            found += stated(where, exercise.get(field, ""), kept)
    return found

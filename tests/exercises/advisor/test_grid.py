"""The advisor's headline never denies its reasons, over a grid of questionnaire
answers on the dev site (with its calibration's quiet figures) and on VSC-3 (its
published references), read off each answer's own words: the first target is never
one the same answer says the data fills or exceeds the quota of, nor at least 3x
slower for the job's I/O than another target that fits and keeps results, unless
the headline itself names the trade-off. Pure Python, no database."""

import itertools
import re

import pytest

from exercises.advisor import Access, Advice, FileShape, Question, TargetFacts, advise
from exercises.advisor.words import duration, took
from jobs.figures import shown
from tests.exercises.advisor.sites import SITES

GIB = [0.002, 0.01, 0.1, 0.5, 0.9, 1, 1.9, 3, 8, 9.5, 40, 400, 2048]  # 2 MiB to 2 TiB
GRID = [
    Question(
        access=access,
        file_shape=shape,
        data_gib=data,
        node_memory_gib=node,
        app_memory_gib=app,
        must_outlive_job=outlive,
        shared_between_nodes=shared,
        file_count=files,
    )
    for access, shape, data, outlive, shared, files, app, node in itertools.product(
        Access,
        FileShape,
        GIB,
        (True, False),
        (False, True),
        (None, 20, 2_000_000),
        (0, 20),
        (24, 64),
    )
]
QUOTA = re.compile(
    r"(?:is more than|would fill (\d+%) of) the ([\d.,]+ GiB) default quota on (\S+?)[,;]"
)
FIGURE = re.compile(r"([\d,]+\.\d) (?:MiB/s|files per second)")


def quiet(facts: list[TargetFacts]) -> set[str]:
    """Every figure of the site, as the pages write them."""
    values = [(t.sequential_mib_s, t.random_mib_s, t.create_ops_s) for t in facts]
    return {shown(v) for v in itertools.chain(*values) if v}


def denials(advice: Advice, q: Question, figures: set[str]) -> list[str]:
    """What the answer's headline denies of its own ranking, in the answer's words."""
    first, plan, found = advice.ranking[0], advice.plan, []
    for rec in advice.ranking:
        # The words agree with the fields the check reads.
        said = " ".join(rec.reasons)
        fills = [m for m in QUOTA.finditer(said) if m[3] == rec.target_name]
        if bool(fills) != (rec.quota_share is not None and rec.quota_share > 0.8):
            found.append(f"{rec.target_name}: quota words {fills} against {rec.quota_share}")
        if rec.seconds is not None and not rec.cost.startswith(
            f"This job's I/O here: {duration(rec.seconds)}: "
        ):
            found.append(f"{rec.target_name}: {rec.cost} against {rec.seconds} s")
        emptied = "copy results elsewhere" in said or "copy the results you keep" in said
        if q.must_outlive_job and emptied == rec.keeps_results:
            found.append(f"{rec.target_name}: keeps results {rec.keeps_results}, says {said}")
        for shown_figure in FIGURE.findall(" ".join((said, rec.cost, *rec.figures))):
            if shown_figure not in figures:
                found.append(f"{rec.target_name} quotes {shown_figure}, no figure of the site")
    for m in QUOTA.finditer(" ".join(first.reasons)):
        named = f"fill {m[1]} of its {m[2]} default quota" if m[1] else f"default quota is {m[2]}"
        if m[3] == first.target_name and named not in plan:
            found.append(f"first {first.target_name}: '{m[0]}', the plan does not say it")
    rivals = [
        r for r in advice.ranking[1:]
        if r.fits and not r.full and r.keeps_results and r.seconds is not None
    ]  # fmt: skip
    if not rivals:
        return found
    fastest = min(rivals, key=lambda r: r.seconds or 0.0)
    if first.seconds is None:
        if "placed by the site's advice" not in plan:
            found.append(f"first {first.target_name} has no figure, the plan does not say so")
    elif first.seconds > 0 and first.seconds >= 3 * (fastest.seconds or 0.0):
        trade_off = (duration(first.seconds), fastest.target_name, took(fastest.seconds or 0.0))
        if not all(words in plan for words in trade_off):
            found.append(
                f"first {first.target_name} takes {first.seconds:.3g} s, {fastest.target_name} "
                f"{fastest.seconds:.3g} s, and the plan does not say so"
            )
    return found


@pytest.mark.parametrize("site", SITES)
def test_the_headline_never_denies_its_reasons_over_the_grid(site: str) -> None:
    targets, figures = SITES[site], quiet(SITES[site])
    assert len(GRID) >= 500

    found = {}
    for q in GRID:
        if problems := denials(advise(targets, q), q, figures):
            found[q] = problems

    assert not found, f"{len(found)} of {len(GRID)}: " + "\n".join(
        f"{q}: {p}" for q, p in list(found.items())[:5]
    )

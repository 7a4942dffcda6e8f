"""Sites as the advisor sees them, with the quiet figures its tests hold it to: the dev
site with its calibration's medians, VSC-3 with its published references; both with
their targets' redundancy and purge as exercises/advisor/facts.py reads them."""

from dataclasses import replace

from exercises.advisor import TargetFacts
from exercises.advisor.words import protects
from tests.published import facts_of, profile

# The dev site's calibration medians, as issue 57 quotes them: 1a and 2a in MiB/s, 6's
# creates in files per second. $WORK's and $PROJECT's random figures and the creates
# of $SCRATCH, $BINFS, $WORK and $PROJECT are plausible, not measured.
DEV_QUIET = {
    "home": (20.0, 13.1, 1293.0),
    "global": (197.0, 0.9, 320.0),
    "scratch": (996.0, 7.8, 3100.0),
    "tmp": (9576.0, 1800.0, 20000.0),
    "binfs": (399.0, 60.0, 5200.0),
    "work": (80.0, 2.5, 450.0),
    "project": (93.0, 4.1, 900.0),
}
PUBLISHED = "published: VSC-3 storage course (2019)"
ROUND = "measured here by calibration round 4 on 2 May 2026: the median of 3 runs"


def as_the_site_says(facts: list[TargetFacts], name: str) -> list[TargetFacts]:
    """Facts as exercises/advisor/facts.py loads them: redundancy and purge from the
    profile's words."""
    texts = {t["key"]: t for t in profile(name)["targets"]}
    return [
        replace(
            t,
            redundancy=texts[t.key].get("redundancy", ""),
            redundant=protects(texts[t.key].get("redundancy", "")),
            purge=texts[t.key].get("purge_policy", ""),
        )
        for t in facts
    ]


def dev_facts() -> list[TargetFacts]:
    return [
        replace(
            t,
            sequential_mib_s=DEV_QUIET[t.key][0],
            random_mib_s=DEV_QUIET[t.key][1],
            create_ops_s=DEV_QUIET[t.key][2],
            sequential_source=f"exercise 1a, {ROUND}",
            random_source=f"exercise 2a, {ROUND}",
            create_source=f"exercise 6, {ROUND}",
        )
        for t in as_the_site_says(facts_of("dev"), "dev")
    ]


SITES = {
    "dev": dev_facts(),
    # As the portal reads VSC-3: 1a and 2a are its plainest exercises (facts.py).
    "vsc3": [
        replace(
            t,
            sequential_source=f"exercise 1a, {PUBLISHED}",
            random_source=f"exercise 2a, {PUBLISHED}",
        )
        for t in as_the_site_says(facts_of("vsc3", "1a", "2a"), "vsc3")
    ],
}

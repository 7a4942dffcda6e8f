"""The dev site's exercises teach in one run: each claim of their profile holds on a
single run of each side, with one second chance (a run disturbed by a neighbour, as a
trainee's may be). `make bench` counts ten rounds (bench/test_lessons.py)."""

import pytest

from exercises.catalogue import lessons
from tests.lessons import claims, run_round, tally

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.alone("measures the lessons on a quiet cluster"),
]


def test_each_claim_of_the_dev_exercises_shows_in_a_single_run(
    live_portal, dev_profile, trainee_account
) -> None:
    site_claims = claims(dev_profile)
    # 1a: two; 1b: one; 2a: four ($BINFS too); 2b: one; 8b: one (collective on $WORK);
    # 9: three (request sizes on $GLOBAL and $TMPDIR, from one run on each); 10b, 10c
    # and 10d: one each (striping on $WORK: a shared file, a file each); 11a: two, 11b:
    # one (compression on $PROJECT: the space, and the speed)
    assert len(site_claims) == 18
    first = run_round(dev_profile, trainee_account, lessons.sides(site_claims))
    missed = [t.claim for t in tally(site_claims, [first]) if not t.held]
    # Only the claims the first round missed run again.
    second = run_round(dev_profile, trainee_account, lessons.sides(missed)) if missed else {}

    still = [t.line for t in tally(missed, [second]) if not t.held]
    print("\n".join(t.line for t in tally(site_claims, [first])))  # for the record (-s)
    assert not still, (still, first)

"""Slurm's hostlists read in Python (jobs/slurm/hostlist.py): the names they stand for,
and a bounded cost whatever a string holds."""

import time

import pytest

from jobs.slurm.hostlist import MAX_NAMES, clipped, names


@pytest.mark.parametrize(
    "hostlist, expected",
    [
        ("c1", {"c1"}),
        ("c[1-3],d5", {"c1", "c2", "c3", "d5"}),
        ("cn[1,3-4]", {"cn1", "cn3", "cn4"}),
        ("node[08-10]", {"node08", "node09", "node10"}),
        ("r[1-2]n[1-2]", {"r1n1", "r1n2", "r2n1", "r2n2"}),
        ("", set()),
    ],
)
def test_a_hostlist_stands_for_its_nodes(hostlist: str, expected: set[str]) -> None:
    assert names(hostlist) == expected


@pytest.mark.parametrize(
    "crafted",
    [
        "c[1-999999999999]",
        "c[" + ",".join(["1-9"] * 10_000) + "]",
        "a[1-99][1-99][1-99]",
        "c[1-3" + "," * 50_000,
        "x" * 1_000_000,
        "c[[1]]",
        "c[3-1]",
        "c[a-b]",
    ],
)
def test_a_crafted_hostlist_of_any_size_is_refused_in_bounded_time(crafted: str) -> None:
    started = time.monotonic()

    with pytest.raises(ValueError):
        names(crafted)

    assert time.monotonic() - started < 5  # milliseconds: a bound, not a benchmark


def test_no_more_names_than_the_limit_are_made() -> None:
    assert len(names(f"c[1-{MAX_NAMES}]")) == MAX_NAMES
    with pytest.raises(ValueError, match="more than"):
        names(f"c[1-{MAX_NAMES}],d1")


def test_a_hostlist_too_long_to_keep_keeps_its_first_whole_entries() -> None:
    assert clipped("c1", 255) == "c1"
    assert clipped("alpha,beta[1-2],gamma", 16) == "alpha,beta[1-2]"
    assert clipped("c[1-2", 3) == ""  # no hostlist: nothing to keep of it

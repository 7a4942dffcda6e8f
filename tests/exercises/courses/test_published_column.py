"""A "Site reference (as published)" column with no figure anywhere is left out, and
one sentence a page says why, however many tables the page has."""

import re

import pytest

from exercises.catalogue.models import ReferenceResult

pytestmark = pytest.mark.django_db

COLUMN = "Site reference (as published)"
WHY = "The site has published no reference figures for"


def headers_of_tables(page: str) -> list[list[str]]:
    return [
        re.findall(r'<th scope="col">(.*?)</th>', t)
        for t in re.findall(r"<thead>.*?</thead>", page)
    ]


def publish(profile, exercise: str, target: str, value: float) -> None:
    ReferenceResult.objects.create(
        exercise=profile.exercises.get(key=exercise),
        target=profile.targets.get(key=target),
        value=value,
        source="a test talk",
    )


def test_the_lab_leaves_the_empty_column_out_and_says_why_once(client, people) -> None:
    client.force_login(people["trainee"])

    page = client.get("/lab/1a/").content.decode()

    assert COLUMN not in page
    assert page.count(WHY) == 1 and f"{WHY} exercise 1a, so no column shows them" in page
    target = client.get("/storage/tmp/").content.decode()
    assert COLUMN not in target and target.count(WHY) == 1
    assert f"{WHY} any exercise on this page" in target  # not a list of all fifteen


def test_a_published_figure_brings_the_column_back_without_the_sentence(
    client, people, dev_profile
) -> None:
    publish(dev_profile, "1a", "tmp", 1234.5)
    client.force_login(people["trainee"])

    page = client.get("/lab/1a/").content.decode()

    assert COLUMN in page and WHY not in page
    assert "1,234.5 MiB/s" in page


def test_the_overview_says_it_once_for_all_its_tables(client, people, dev_profile) -> None:
    course = people["course"]
    client.force_login(people["instructor"])
    url = f"/courses/{course.pk}/overview?exercise=all"

    page = client.get(url).content.decode()
    tables = [h for h in headers_of_tables(page) if "Lowest" in h]
    assert len(tables) > 1 and all(COLUMN not in h for h in tables)
    assert page.count(WHY) == 1

    publish(dev_profile, "1a", "tmp", 1234.5)
    page = client.get(url).content.decode()
    tables = [h for h in headers_of_tables(page) if "Lowest" in h]
    assert [COLUMN in h for h in tables].count(True) == 1  # 1a's table alone
    named = re.search(rf"{WHY} exercises? (.*?), so no column", page)[1]
    assert "1a" not in re.split(r", | and ", named)  # the others' tables still lack it

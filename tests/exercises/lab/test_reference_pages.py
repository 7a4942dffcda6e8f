"""The site's published figures in pages: each in its own unit (a MB/s figure with
its MiB/s beside it, file operations in ops/s) and cited to a source note a reader
sees without a mouse; and in the advisor, bandwidths only, in MiB/s."""

import io
import re

import pytest
from django.contrib.auth.models import Permission
from django.core.management import call_command
from django.test import Client

from exercises.advisor.facts import target_facts
from exercises.catalogue.models import ReferenceResult, SiteProfile
from exercises.courses.models import Course
from tests.runs import use_site_profile

pytestmark = pytest.mark.django_db

IOR_FPP_SOURCE = "CRI storage talk (UChicago): IOR POSIX, 16 nodes, 448 cores, 1 file per process"


@pytest.fixture
def cri(db, settings) -> SiteProfile:
    return use_site_profile("cri", settings)


@pytest.fixture
def reader(make_user, client: Client) -> Client:
    client.force_login(make_user())
    return client


def cell_of(page: str, target: str, column: str = "Site reference (as published)") -> str:
    """The cell of the row headed by `target` in the column headed `column`."""
    table = next(t for t in re.findall(r"<table.*?</table>", page, re.S) if column in t)
    headers = re.findall(r'<th scope="col">(.*?)</th>', table, re.S)
    row = re.search(
        rf'<th scope="row">(?:<a [^>]*>)?{re.escape(target)}(?:</a>)?</th>(.*?)</tr>', table, re.S
    )
    assert row, f"no row for {target}"
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row.group(1), re.S)
    return cells[headers.index(column) - 1]


def notes(page: str, prefix: str) -> dict[str, str]:
    """The source notes under a table, by their id."""
    return dict(re.findall(rf'<li id="({prefix}-source-\d+)">(.*?)</li>', page))


def test_the_lab_shows_a_mb_s_figure_as_published_with_mib_s_and_its_source(cri, reader):
    page = reader.get("/lab/ior-fpp/").content.decode()

    isilon = cell_of(page, "Isilon")
    assert "write 864 MB/s (824 MiB/s)" in isilon
    assert "read 880 MB/s (839 MiB/s)" in isilon  # the exercise reads its data back
    cited = re.findall(r'href="#(lab-source-\d+)"', isilon)
    assert cited and set(cited) <= notes(page, "lab").keys()
    assert notes(page, "lab")[cited[0]] == IOR_FPP_SOURCE
    assert "20,719 MB/s (19,759 MiB/s)" in cell_of(page, "GPFS Scratch")


def test_a_metadata_exercise_shows_the_sites_file_operations_per_second(cri, reader):
    page = reader.get("/lab/mdtest/").content.decode()

    assert "with the site's measured and published figures below it" in page
    row = re.search(r'<th scope="row"><a [^>]*>GPFS Data</a></th>(.*?)</tr>', page, re.S).group(1)
    cells = [re.sub(r"<sup>.*?</sup>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
    # No run of mine yet ("–"), each rate as the talk published it below.
    assert cells == [
        "0",
        '–<br><small class="muted">published 19,795 ops/s</small>',
        '–<br><small class="muted">published 4,577,691 ops/s</small>',
        '–<br><small class="muted">published 2,750,277 ops/s</small>',
        '–<br><small class="muted">published 3,063 ops/s</small>',
    ]
    stat = "CRI storage talk (UChicago): mdtest, 16 nodes, 448 cores, file stat"
    assert stat in notes(page, "lab").values()
    assert "MiB/s)" not in row


def test_the_target_page_shows_every_exercises_figures_with_their_units(cri, reader):
    page = reader.get("/storage/gpfs-scratch/").content.decode()

    assert "20,719 MB/s (19,759 MiB/s)" in page
    assert "create 19,708 ops/s" in page and "remove 3,065 ops/s" in page
    assert IOR_FPP_SOURCE in notes(page, "target").values()


def test_a_mib_s_figure_shows_as_published_with_mb_s_beside_it(reader, settings):
    call_command("load_site_profile", "vsc3", stdout=io.StringIO())
    settings.SITE_PROFILE = "vsc3"

    page = reader.get("/lab/1a/").content.decode()

    assert cell_of(page, "$GLOBAL").startswith("925.64 MiB/s (971 MB/s)")
    assert "VSC-3 storage course (2019): IOR Max Write, sequential writes, 1 process" in (
        notes(page, "lab").values()
    )


def test_the_course_overview_shows_the_references_as_published(cri, make_user, client):
    instructor = make_user()
    instructor.user_permissions.add(Permission.objects.get(codename="teach_course"))
    course = Course.objects.create(title="GPFS day", profile=cri)
    course.instructors.add(instructor)
    course.exercises.set(cri.exercises.filter(key="ior-shared"))
    course.targets.set(cri.targets.filter(key__in=["isilon", "gpfs-data"]))
    client.force_login(instructor)

    page = client.get(f"/courses/{course.pk}/overview").content.decode()

    assert "write 98 MB/s (93.5 MiB/s)" in page
    assert "write 14,309 MB/s (13,646 MiB/s)" in page
    shared = "CRI storage talk (UChicago): IOR POSIX, 16 nodes, 448 cores, single shared file"
    assert notes(page, "class-ior-shared") == {"class-ior-shared-source-1": shared}


def test_the_advisor_takes_mb_s_figures_in_mib_s_and_no_file_operations(cri):
    mdtest = cri.exercises.get(key="mdtest")
    ior = cri.exercises.get(key="ior-fpp")
    # A write figure in ops/s can only come from the admin; it is no bandwidth.
    ReferenceResult.objects.filter(exercise=ior, metric="write").update(unit="ops/s")

    facts = {t.key: t for t in target_facts(cri)}

    # Left: the shared-file figures, 20,230 MB/s on GPFS Scratch.
    assert facts["gpfs-scratch"].sequential_mib_s == pytest.approx(20230e6 / 2**20)
    assert facts["isilon"].sequential_mib_s == pytest.approx(98e6 / 2**20)
    assert all(t.random_mib_s is None for t in facts.values())
    assert ReferenceResult.objects.filter(exercise=mdtest).count() == 16

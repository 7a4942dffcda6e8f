"""What a trainee reads on the lab's pages of every shipped site: sizes that are the
workload's, sentences that read as sentences, the exercises in the order they are
taken, a quota no larger than its filesystem, and no path of this repository."""

import re

import pytest
from django.test import Client

from exercises.catalogue.models import SiteProfile
from portal.units import GiB
from tests.runs import use_site_profile

pytestmark = pytest.mark.django_db

SITES = ["dev", "vsc3", "cri", "tacc"]


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


@pytest.fixture
def reader(client: Client, make_user) -> Client:
    client.force_login(make_user())
    return client


def site(name: str, settings) -> SiteProfile:
    return use_site_profile(name, settings)


@pytest.mark.parametrize("name", SITES)
def test_a_size_an_exercise_names_is_its_files_size(name, settings, reader) -> None:
    for exercise in site(name, settings).exercises.all():
        page = text_of(reader.get(f"/lab/{exercise.key}/").content.decode())
        size = exercise.size_per_process // 2**20
        for named in re.findall(r"(\d+) MiB would", page):
            assert int(named) == size, f"{exercise.key} says {named} MiB, writes {size} MiB"


def test_1a_says_its_64_mib_would_fit_in_the_page_cache(settings, reader) -> None:
    site("dev", settings)
    page = text_of(reader.get("/lab/1a/").content.decode())
    assert "writes a 64 MiB file" in page
    assert "written once, 64 MiB would fit in the page cache" in page
    assert "16 MiB" not in page


@pytest.mark.parametrize("name", SITES)
def test_the_workload_line_says_whether_it_fsyncs_in_words(name, settings, reader) -> None:
    for exercise in site(name, settings).exercises.all():
        page = text_of(reader.get(f"/lab/{exercise.key}/").content.decode())
        assert " on." not in page and " off." not in page, exercise.key
        if exercise.fsync and not exercise.measures_metadata:
            assert "with fsync at the end" in page, exercise.key
        elif not exercise.fsync:
            assert "without fsync" in page, exercise.key


@pytest.mark.parametrize("name", SITES)
def test_the_exercises_are_listed_in_the_order_they_are_taken(name, settings, reader) -> None:
    site(name, settings)
    page = reader.get("/lab/").content.decode()
    keys = re.findall(r'href="/lab/([^/"]+)/"', page)
    # The numbered exercises (1a, 2b, 7; not their IOR twins such as 1a-ior) rise.
    numbers = [int(re.match(r"\d+", key)[0]) for key in keys if re.fullmatch(r"\d+[a-z]?", key)]
    assert keys and numbers == sorted(numbers), keys


def test_on_the_dev_site_7_closes_the_first_lessons_after_the_ior_exercises(
    settings, reader
) -> None:
    site("dev", settings)
    page = reader.get("/lab/").content.decode()
    keys = re.findall(r'href="/lab/([^/"]+)/"', page)
    assert keys.index("4b") < keys.index("1a-ior") < keys.index("6") < keys.index("7")
    # The later talks' lessons follow it (collective MPI-IO: 8a and 8b; request size: 9;
    # striping: 10a to 10d; compression: 11a and 11b).
    after = ["8a", "8b", "9", "10a", "10b", "10c", "10d", "11a", "11b"]
    assert keys[keys.index("7") + 1 :] == after


@pytest.mark.parametrize("name", SITES)
def test_no_page_of_a_target_names_a_file_of_this_repository(name, settings, reader) -> None:
    for target in site(name, settings).targets.all():
        page = text_of(reader.get(f"/storage/{target.key}/").content.decode())
        assert not re.search(r"docker/|bench/|README|\w\.sh\b|\w\.py\b", page), target.key


def test_the_tmpdir_page_says_how_it_is_made_without_a_script_name(settings, reader) -> None:
    site("dev", settings)
    page = text_of(reader.get("/storage/tmp/").content.decode())
    assert "mounted on /dev/shm/storagelab/{user} when the account is made" in page
    assert "account.sh" not in page


@pytest.mark.parametrize("name", SITES)
def test_no_default_quota_is_larger_than_its_filesystem(name, settings) -> None:
    for target in site(name, settings).targets.all():
        whole = re.match(r"([\d.]+) (GiB|TiB)", target.size)
        if target.quota_bytes and whole:
            size = float(whole[1]) * GiB * (1024 if whole[2] == "TiB" else 1)
            assert target.quota_bytes <= size, f"{target.key}: {target.size}"


def test_scratch_says_what_its_size_and_its_quota_each_are(settings, reader) -> None:
    site("dev", settings)
    page = text_of(reader.get("/storage/scratch/").content.decode())
    assert "Size 8 GiB in all: the whole filesystem, shared by every account" in page
    assert "Default quota 4 GiB per account: the most one account may keep here" in page

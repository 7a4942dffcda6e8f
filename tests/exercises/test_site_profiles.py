"""Loading a site profile: every shipped profile loads, and a profile naming an
engine the portal does not have is refused whole."""

import io
import tomllib

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command

from exercises.management.commands.load_site_profile import PROFILES, load
from exercises.models import SiteProfile

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("name", sorted(p.stem for p in PROFILES.glob("*.toml")))
def test_every_shipped_profile_loads(name: str) -> None:
    out = io.StringIO()
    call_command("load_site_profile", name, stdout=out)

    assert out.getvalue().startswith(f"site profile {name}:")
    profile = SiteProfile.objects.get(name=name)
    assert profile.engine in ("fio", "ior")
    assert all(e.runs_with in ("fio", "ior", "mdtest") for e in profile.exercises.all())


def test_an_unknown_engine_is_refused_and_nothing_is_stored() -> None:
    data = tomllib.loads((PROFILES / "dev.toml").read_text())
    data["profile"] |= {"name": "typo-site", "engine": "fio3"}

    with pytest.raises(ValidationError, match="fio3"):
        load(data)

    assert not SiteProfile.objects.filter(name="typo-site").exists()


def test_an_exercise_its_engine_cannot_run_is_refused_and_nothing_is_stored() -> None:
    data = tomllib.loads((PROFILES / "dev.toml").read_text())
    data["profile"]["name"] = "ior-small-files"
    small_files = next(e for e in data["exercises"] if e["key"] == "3")
    small_files["engine"] = "ior"  # IOR writes one file per process, not 200

    with pytest.raises(ValidationError, match="many small files need fio"):
        load(data)

    assert not SiteProfile.objects.filter(name="ior-small-files").exists()


def test_the_dev_site_runs_fio_and_names_ior_and_mdtest_where_it_uses_them() -> None:
    call_command("load_site_profile", "dev", stdout=io.StringIO())
    exercises = SiteProfile.objects.get(name="dev").exercises.all()

    engines = {e.key: e.runs_with for e in exercises}

    assert engines["1a"] == engines["3"] == "fio"
    assert engines["1a-ior"] == engines["2b-ior"] == engines["5b"] == "ior"
    assert engines["6"] == "mdtest"
    assert {e.key for e in exercises if e.read_back} == {"5a", "5b"}

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
    assert SiteProfile.objects.get(name=name).engine in ("fio", "ior")


def test_an_unknown_engine_is_refused_and_nothing_is_stored() -> None:
    data = tomllib.loads((PROFILES / "dev.toml").read_text())
    data["profile"] |= {"name": "typo-site", "engine": "fio3"}

    with pytest.raises(ValidationError, match="fio3"):
        load(data)

    assert not SiteProfile.objects.filter(name="typo-site").exists()

"""One module per slurmrestd API version (jobs/slurm/adapters/): discovery tries each
of them, newest first, and each says what changed in it."""

import re
from pathlib import Path

import pytest

from jobs.slurm import adapters


def test_discovery_tries_every_version_module_newest_first() -> None:
    folder = Path(adapters.__file__).parent
    files = {path.stem for path in folder.glob("v*.py")}
    versions = [tuple(map(int, v.removeprefix("v").split("."))) for v in adapters.API_VERSIONS]

    # A version's module that no chain reaches would never be tried.
    assert {adapter.__name__.rpartition(".")[2] for adapter in adapters.ADAPTERS} == files
    assert versions == sorted(versions, reverse=True)
    assert len(set(versions)) == len(versions)


def test_each_version_module_names_its_version_and_says_what_changed() -> None:
    for adapter in adapters.ADAPTERS:
        assert adapter.__name__.endswith(adapter.VERSION.replace(".", "_"))
        assert re.match(rf"{re.escape(adapter.VERSION)}, Slurm \d\d\.\d\d", adapter.__doc__)


def test_a_version_the_client_does_not_speak_is_refused() -> None:
    with pytest.raises(ValueError, match="v0.0.37"):
        adapters.adapter("v0.0.37")

"""`manage.py slurm_status`, which tells a site what its Slurm lacks for the portal,
against the live dev cluster (Slurm 26.05) with one thing wrong at a time."""

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from jobs.slurm import get_client
from tests.cluster24 import API_VERSION, CLUSTER_NAME, RELEASE
from tests.conftest import ACCOUNT_SCRIPT
from tests.names import unique_name


@pytest.fixture(autouse=True)
def fresh_client() -> Iterator[None]:
    """The Slurm client is built once per process from settings; rebuilt for each test."""
    get_client.cache_clear()
    yield
    get_client.cache_clear()


def test_it_prints_the_api_version_and_cluster(capsys) -> None:
    call_command("slurm_status")

    out = capsys.readouterr().out
    assert f"API version: {API_VERSION}" in out
    assert f"Slurm release: {RELEASE}." in out
    assert f"cluster: {CLUSTER_NAME}" in out
    assert "slurmrestd /readyz: ready" in out or RELEASE < "26"


def test_it_fails_with_one_clear_line_when_slurmrestd_is_away(settings) -> None:
    settings.SLURMRESTD_URL = "http://127.0.0.1:9"
    with pytest.raises(CommandError, match="cannot reach slurmrestd.*Look at SLURMRESTD_URL"):
        call_command("slurm_status")


def test_without_the_jwt_key_it_says_which_file(settings, tmp_path: Path) -> None:
    settings.SLURM_JWT_KEY_FILE = str(tmp_path / "jwt_hs256.key")
    with pytest.raises(CommandError, match="cannot read the Slurm JWT key .*jwt_hs256.key"):
        call_command("slurm_status")


def test_with_another_key_than_the_clusters_it_says_the_token_was_refused(
    settings, tmp_path: Path
) -> None:
    other = tmp_path / "jwt_hs256.key"
    other.write_bytes(os.urandom(32))
    settings.SLURM_JWT_KEY_FILE = str(other)

    with pytest.raises(CommandError) as refused:
        call_command("slurm_status")

    # Not "the controller is down", which 26.05's ping answers a refused token with.
    assert "token refused" in str(refused.value)
    assert "AuthAltParameters=jwt_key" in str(refused.value)


def test_a_job_of_an_account_slurm_knows_is_accepted(capsys, cluster_username: str) -> None:
    call_command("slurm_status", "--try-job", cluster_username)

    assert f"job of {cluster_username}: accepted as job" in capsys.readouterr().out


@pytest.fixture
def host_only_account() -> Iterator[str]:
    """An account of this host that the cluster's machines were never given."""
    name = unique_name("slt")
    subprocess.run([str(ACCOUNT_SCRIPT), "add", name], check=True, timeout=60)
    yield name
    subprocess.run([str(ACCOUNT_SCRIPT), "remove", name], check=False, timeout=60)


def test_an_account_the_controller_does_not_know_is_named(host_only_account: str) -> None:
    with pytest.raises(CommandError) as refused:
        call_command("slurm_status", "--try-job", host_only_account)

    said = str(refused.value)
    assert f"Slurm took no job of {host_only_account}" in said
    assert "Rejecting authentication of user nobody" in said
    assert "slurmctld's host does not know" in said

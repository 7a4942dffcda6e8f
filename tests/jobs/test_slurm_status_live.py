import pytest
from django.core.management import CommandError, call_command

from jobs.slurm import get_client
from tests.cluster24 import API_VERSION, CLUSTER_NAME, RELEASE


def test_it_prints_the_api_version_and_cluster(capsys) -> None:
    call_command("slurm_status")

    out = capsys.readouterr().out
    assert f"API version: {API_VERSION}" in out
    assert f"Slurm release: {RELEASE}." in out
    assert f"cluster: {CLUSTER_NAME}" in out


def test_it_fails_with_one_clear_line_when_slurmrestd_is_away(settings) -> None:
    settings.SLURMRESTD_URL = "http://127.0.0.1:9"
    get_client.cache_clear()
    try:
        with pytest.raises(CommandError, match="cannot reach slurmrestd"):
            call_command("slurm_status")
    finally:
        get_client.cache_clear()

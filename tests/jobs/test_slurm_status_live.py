import pytest
from django.core.management import CommandError, call_command

from jobs.slurm import get_client


def test_it_prints_the_api_version_and_cluster(capsys) -> None:
    call_command("slurm_status")

    out = capsys.readouterr().out
    assert "API version: v0.0.38" in out
    assert "cluster: storagelab" in out


def test_it_fails_with_one_clear_line_when_slurmrestd_is_away(settings) -> None:
    settings.SLURMRESTD_URL = "http://127.0.0.1:9"
    get_client.cache_clear()
    try:
        with pytest.raises(CommandError, match="cannot reach slurmrestd"):
            call_command("slurm_status")
    finally:
        get_client.cache_clear()

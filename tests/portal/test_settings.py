"""Settings a site gets wrong are refused at start, with what to change."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from portal.settings import envcommand
from tests.startup import start_with


def test_a_submit_lease_shorter_than_an_attempt_is_refused() -> None:
    # A lease that ends while a slow request is in flight lets a second attempt
    # submit a second job for the same run.
    refused = start_with(SLURMRESTD_TIMEOUT="20", SUBMIT_LEASE_SECONDS="30")

    assert refused.returncode != 0
    assert "SUBMIT_LEASE_SECONDS (30) must be at least three times SLURMRESTD_TIMEOUT" in (
        refused.stderr
    )
    assert start_with(SLURMRESTD_TIMEOUT="10", SUBMIT_LEASE_SECONDS="30").returncode == 0


def test_a_slurmrestd_ca_bundle_that_is_not_there_is_refused() -> None:
    refused = start_with(SLURMRESTD_CA_BUNDLE="/nonexistent/site-ca.pem")

    assert refused.returncode != 0
    assert "SLURMRESTD_CA_BUNDLE: no such file /nonexistent/site-ca.pem" in refused.stderr


def test_the_mpi_launcher_is_read_as_words_of_a_known_launcher(monkeypatch) -> None:
    programs = ("srun", "mpirun", "mpiexec")
    for value, words in [
        ("mpirun", ["mpirun"]),
        ("srun --mpi=pmix", ["srun", "--mpi=pmix"]),
        (
            "  /opt/openmpi/bin/mpirun   --mca btl ^openib ",
            ["/opt/openmpi/bin/mpirun", "--mca", "btl", "^openib"],
        ),
    ]:
        monkeypatch.setenv("MPI_LAUNCHER", value)
        assert envcommand("MPI_LAUNCHER", "mpirun", programs) == words


@pytest.mark.parametrize(
    "value", ["", "ior", "srun --mpi=pmix; rm -rf ~", "mpirun $(id)", "srun 'quoted'"]
)
def test_an_mpi_launcher_that_is_no_launcher_or_not_plain_is_refused(
    monkeypatch, value: str
) -> None:
    monkeypatch.setenv("MPI_LAUNCHER", value)

    with pytest.raises(ImproperlyConfigured, match="MPI_LAUNCHER must be srun or mpirun"):
        envcommand("MPI_LAUNCHER", "mpirun", ("srun", "mpirun", "mpiexec"))


def test_a_bad_mpi_launcher_stops_the_start() -> None:
    refused = start_with(MPI_LAUNCHER="mpirun && curl evil")

    assert refused.returncode != 0
    assert "MPI_LAUNCHER must be srun or mpirun or mpiexec with its options" in refused.stderr


def test_the_demos_database_password_is_refused_outside_debug() -> None:
    env = {"DB_PASSWORD": "storagelab", "DB_PASSWORD_FILE": ""}
    refused = start_with(**env, DEBUG="false")

    assert refused.returncode != 0
    assert "DB_PASSWORD is 'storagelab', the well-known password of the demo" in refused.stderr
    # On a machine of one's own, with DEBUG, it starts (the check may then fail to connect).
    assert "well-known password" not in start_with(**env, DEBUG="true").stderr

"""The slurmrestd client against the live dev cluster (Slurm 26.05, API v0.0.45)."""

import time
from pathlib import Path

import jwt
import pytest
from django.conf import settings

from jobs.slurm import SlurmAuthError, SlurmClient, SlurmError, SlurmJob, get_client
from jobs.slurm.auth import StaticToken
from jobs.slurm.models import JobState
from tests.cluster import trivial_job
from tests.cluster24 import API_VERSION, RELEASE


def wait_until_finished(
    client: SlurmClient, user: str, job_id: int, timeout: float = 60
) -> SlurmJob:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = client.job(user, job_id)
        if job.state.finished:
            return job
        time.sleep(0.3)
    raise AssertionError(f"job {job_id} still {job.state} after {timeout}s")


def test_it_discovers_the_api_version_of_the_dev_cluster() -> None:
    ping = get_client().ping()
    assert ping.api_version == API_VERSION
    assert ping.release.startswith(f"{RELEASE}.")
    assert ping.up


def test_a_trainee_job_runs_as_the_trainee_to_completed(
    cluster_username: str, scratch_dir: Path
) -> None:
    client = get_client()
    job_id = client.submit(
        cluster_username, trivial_job(scratch_dir, 'echo "hello from $(id -un)"')
    )

    job = wait_until_finished(client, cluster_username, job_id)

    assert job.state == JobState.COMPLETED
    assert job.return_code == 0
    assert job.user_name == cluster_username
    output = (scratch_dir / f"slurm-{job_id}.out").read_text()
    assert output.strip() == f"hello from {cluster_username}"


def test_a_failing_job_reports_its_exit_code(cluster_username: str, scratch_dir: Path) -> None:
    client = get_client()
    job_id = client.submit(cluster_username, trivial_job(scratch_dir, "exit 3"))

    job = wait_until_finished(client, cluster_username, job_id)

    assert job.state == JobState.FAILED
    assert job.return_code == 3
    assert job.reason == "NonZeroExitCode"


def test_a_token_for_another_user_is_refused(make_cluster_username, tmp_path: Path) -> None:
    owner, intruder = make_cluster_username(), make_cluster_username()
    token = jwt.encode(
        {"sun": owner, "iat": int(time.time()), "exp": int(time.time()) + 60},
        Path(settings.SLURM_JWT_KEY_FILE).read_bytes(),
        algorithm="HS256",
    )
    # The owner's token presented under the intruder's name.
    forged = SlurmClient(
        settings.SLURMRESTD_URL, StaticToken(token), service_user=intruder, timeout=10
    )
    spec = trivial_job(Path("/srv/storagelab/scratch") / intruder, "true")

    with pytest.raises(SlurmError):
        forged.submit(intruder, spec)

    names = {job.name for job in get_client().jobs(owner) or []}
    assert spec.name not in names


def test_a_token_signed_with_another_key_is_refused(cluster_username: str) -> None:
    token = jwt.encode(
        {"sun": cluster_username, "iat": int(time.time()), "exp": int(time.time()) + 60},
        b"not-the-cluster-key-not-the-cluster-key",
        algorithm="HS256",
    )
    client = SlurmClient(
        settings.SLURMRESTD_URL, StaticToken(token), service_user=cluster_username, timeout=10
    )
    with pytest.raises(SlurmError):
        client.ping()


class NoToken:
    def headers(self, user: str) -> dict[str, str]:
        return {}


def test_a_request_without_token_is_an_authentication_error(cluster_username: str) -> None:
    client = SlurmClient(
        settings.SLURMRESTD_URL, NoToken(), service_user=cluster_username, timeout=10
    )
    with pytest.raises(SlurmAuthError):
        client.api_version()

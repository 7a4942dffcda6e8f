"""A storage scan or purge goes to Slurm by the jobs' one road (jobs/app_jobs.py): never
from the page's request, always from a Celery task after its place in the rate limit,
once (a retry after a lost answer adopts the job Slurm took), and a refusal or a task
queue that is away ends the scan failed, saying why. The real job: test_storage_scan_live.py."""

from dataclasses import dataclass, field

import pytest
from kombu.exceptions import OperationalError

from exercises.quotas import scans
from exercises.quotas.models import StorageScan
from jobs import app_jobs
from jobs.app_jobs import BROKER_DOWN, submit_app_job
from jobs.ratelimit import RateLimited
from jobs.results import token_hash
from jobs.slurm import JobSpec, SlurmConnectionError, SlurmRejected
from jobs.slurm.models import JobState, SlurmJob

pytestmark = pytest.mark.django_db


@dataclass
class Slurm:
    """Stands in for the Slurm client where a scan could reach it; records each submit."""

    submitted: list[tuple[str, JobSpec]] = field(default_factory=list)
    listed: list[SlurmJob] = field(default_factory=list)
    refuse: Exception | None = None

    def submit(self, user: str, spec: JobSpec) -> int:
        if self.refuse:
            raise self.refuse
        self.submitted.append((user, spec))
        return 4000 + len(self.submitted)

    def jobs(self, user: str) -> list[SlurmJob]:
        return self.listed

    def job(self, user: str, job_id: int) -> SlurmJob:
        return SlurmJob(job_id=job_id, state=JobState.RUNNING, user_name=user)


@pytest.fixture
def slurm(monkeypatch) -> Slurm:
    stand_in = Slurm()
    # Every module that could talk to Slurm about a scan: the page's, the task's.
    monkeypatch.setattr("exercises.quotas.scans.get_client", lambda: stand_in)
    monkeypatch.setattr("jobs.app_jobs.get_client", lambda: stand_in)
    return stand_in


@pytest.fixture
def sent(monkeypatch) -> list[tuple]:
    """The scans' submit tasks the commits sent (the broker stands aside)."""
    calls: list[tuple] = []
    monkeypatch.setattr(submit_app_job, "delay", lambda *args: calls.append(args))
    return calls


@pytest.fixture
def retried(monkeypatch) -> dict:
    """What the task asked Celery to try again with."""
    asked: dict = {}

    def retry(**options):
        asked.update(options)
        raise RuntimeError("retried")

    monkeypatch.setattr(submit_app_job, "retry", retry)
    return asked


def started(account, dev_profile, django_capture_on_commit_callbacks) -> StorageScan:
    with django_capture_on_commit_callbacks(execute=True):
        return scans.start(account, list(dev_profile.targets.all()))


def test_the_pages_start_reaches_no_slurm_and_queues_the_scans_task(
    client, ada_account, dev_profile, slurm, sent, django_capture_on_commit_callbacks
) -> None:
    client.force_login(ada_account.user)

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/storage/scan")

    assert response.status_code == 302
    assert slurm.submitted == []  # not in the request
    scan = StorageScan.objects.get(account=ada_account)
    assert sent == [(scans.JOB_KIND, scan.pk)]
    assert scan.status == StorageScan.Status.SUBMITTED and scan.slurm_job_id is None


def test_the_task_takes_its_place_in_the_rate_limit_then_submits_once_with_a_fresh_secret(
    ada_account, dev_profile, slurm, sent, retried, monkeypatch, django_capture_on_commit_callbacks
) -> None:
    scan = started(ada_account, dev_profile, django_capture_on_commit_callbacks)
    monkeypatch.setattr("jobs.app_jobs.take_submit_slot", lambda: (_ for _ in ()).throw(
        RateLimited(4.5)
    ))  # fmt: skip

    with pytest.raises(RuntimeError, match="retried"):
        submit_app_job.run(scans.JOB_KIND, scan.pk)

    assert retried["countdown"] == 4.5 and retried["kwargs"]["slot_taken"] is True
    assert slurm.submitted == []  # its place is 4.5 s ahead: nothing went yet

    submit_app_job.run(scans.JOB_KIND, scan.pk, slot_taken=True)  # as Celery runs it then
    submit_app_job.run(scans.JOB_KIND, scan.pk, slot_taken=True)  # a second message

    ((user, spec),) = slurm.submitted
    scan.refresh_from_db()
    assert user == ada_account.username and scan.slurm_job_id == 4001
    secret = spec.environment["STORAGELAB_RESULT_TOKEN"]
    assert token_hash(secret) == scan.token_hash  # the job's secret is the one kept
    assert secret not in spec.script  # the script can be shown: the secret is not in it
    assert spec.name == f"storagelab-scan-{str(scan.key)[:8]}"


def test_a_retry_after_no_answer_adopts_the_job_slurm_took(
    ada_account, dev_profile, slurm, sent, retried, django_capture_on_commit_callbacks
) -> None:
    scan = started(ada_account, dev_profile, django_capture_on_commit_callbacks)
    slurm.refuse = SlurmConnectionError("POST /slurm/v0.0.42/job/submit: timed out")

    with pytest.raises(RuntimeError, match="retried"):
        submit_app_job.run(scans.JOB_KIND, scan.pk, slot_taken=True)

    assert retried["kwargs"] == {"slot_taken": False, "tried": True}
    scan.refresh_from_db()
    assert scan.status == StorageScan.Status.SUBMITTED  # waits, as its runs do
    # The submission had reached Slurm all the same: the retry finds it and takes it.
    slurm.refuse = None
    name = f"storagelab-scan-{str(scan.key)[:8]}"
    slurm.listed = [
        SlurmJob(job_id=77, name=name, user_name="someone-else", state=JobState.PENDING),
        SlurmJob(job_id=78, name=name, user_name=ada_account.username, state=JobState.PENDING),
    ]
    kept = scan.token_hash

    submit_app_job.run(scans.JOB_KIND, scan.pk, slot_taken=True, tried=True)

    scan.refresh_from_db()
    assert slurm.submitted == [] and scan.slurm_job_id == 78
    assert scan.token_hash == kept  # the adopted job's secret still holds


def test_slurms_refusal_ends_the_scan_failed_saying_why(
    ada_account, dev_profile, slurm, sent, django_capture_on_commit_callbacks
) -> None:
    scan = started(ada_account, dev_profile, django_capture_on_commit_callbacks)
    slurm.refuse = SlurmRejected("invalid partition specified: no-such-partition")

    submit_app_job.run(scans.JOB_KIND, scan.pk, slot_taken=True)

    scan.refresh_from_db()
    assert scan.status == StorageScan.Status.FAILED
    assert scan.error == (
        "Slurm did not take the job: invalid partition specified: no-such-partition"
    )


def test_with_the_task_queue_away_the_scan_ends_failed_and_says_to_try_again(
    ada_account, dev_profile, slurm, monkeypatch, django_capture_on_commit_callbacks
) -> None:
    def broker_down(*args):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(submit_app_job, "delay", broker_down)

    scan = started(ada_account, dev_profile, django_capture_on_commit_callbacks)

    scan.refresh_from_db()
    assert scan.status == StorageScan.Status.FAILED and scan.error == BROKER_DOWN
    assert slurm.submitted == []


def test_a_purge_takes_the_same_road(
    ada_account, dev_profile, slurm, sent, settings, django_capture_on_commit_callbacks
) -> None:
    settings.PURGE_TARGETS = ["scratch"]
    with django_capture_on_commit_callbacks(execute=True):
        purge = scans.start(ada_account, list(dev_profile.targets.all()), "purge")

    assert sent == [(scans.JOB_KIND, purge.pk)] and slurm.submitted == []
    submit_app_job.run(scans.JOB_KIND, purge.pk, slot_taken=True)
    ((_, spec),) = slurm.submitted
    assert spec.name.startswith("storagelab-purge-")


def test_the_scans_kind_is_registered_by_the_quotas_app() -> None:
    assert scans.JOB_KIND in app_jobs._kinds

"""(f) The web server is down for 30 s (a restart, a deploy, a proxy's blip) while a
run's job ends and posts its output: the job keeps trying, the output arrives once
the portal is back, and it is taken once."""

import time

import pytest

from jobs.models import BenchmarkRun, RunStatus
from tests.faults.conftest import assert_completed_once, settled
from tests.faults.services import wait_until

pytestmark = pytest.mark.django_db(transaction=True)

DOWN_SECONDS = 30


def test_an_output_posted_while_the_web_server_is_down_arrives_after_its_restart(
    start_portal, make_trainee_browser
) -> None:
    portal = start_portal()
    ada_browser = make_trainee_browser(portal)

    assert ada_browser.start("scratch").status_code == 200
    portal.stop_web()  # the worker submits the run; its job finds nobody to post to
    stopped = time.monotonic()
    run = wait_until(
        "the run's job ended in Slurm's word or still posting",
        lambda: BenchmarkRun.objects.filter(
            user=ada_browser.user, slurm_job_id__isnull=False
        ).first(),
        timeout=60,
    )
    time.sleep(max(0.0, DOWN_SECONDS - (time.monotonic() - stopped)))
    run.refresh_from_db()
    assert run.result_received_at is None, "the output came while the web server was down"
    assert run.status in (RunStatus.SUBMITTED, RunStatus.PENDING, RunStatus.RUNNING), (
        "the job gave up sending its output before the web server came back"
    )

    portal.start_web()
    portal.wait_for_web()

    done = settled(ada_browser.user, 1, timeout=90)
    assert_completed_once(done)
    [run] = done
    assert run.parse_error == "" and run.ingest_attempts == 1
    assert "Completed" in ada_browser.panel()

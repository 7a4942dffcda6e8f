"""The image and docker/compose.yaml work: built from the wheelhouse (docker/image.sh,
air-gapped: the base, PostgreSQL and Redis images come from Debian's packages), the
stack comes up on this machine's network (docker/compose.hostnet.yaml), a trainee logs
in over HTTP and runs 1a on two targets on the dev cluster, through the containers
only (the web server takes the form and the jobs' results, the worker submits, beat
follows the jobs, the results worker reads the outputs), has a Darshan log read (the
darshan worker's sandboxed reader), and the stack goes down leaving no container,
volume or network.

The dev cluster must be up (`make test` starts it, and Docker: docker/dev/docker.sh).
The images and their layers stay between runs: a warm run takes 20 to 30 s, a cold one
(no wheelhouse, no image, no build cache) about two minutes, most of it the builds."""

import re
import secrets
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from django.conf import settings

from tests.cluster24 import bridge_address
from tests.deploy.stack import Stack, build_images, remove_stale_stacks
from tests.http import log_in
from tests.names import unique_name

# The runs panel of an exercise page: one row per run (templates/lab/exercise_detail.html).
RUN_ROW = re.compile(
    r'<tr data-run="[^"]+">\s*<th scope="row"><a [^>]*>([^<]+)</a></th>\s*'
    r'<td><span class="status (\w+)">.*?</td>\s*<td class="num">([^<]*)</td>',
    re.DOTALL,
)
ENDED = {"completed", "failed", "cancelled", "lost"}
DARSHAN_LOG = Path(__file__).parents[1] / "jobio" / "logs" / "random-4k.darshan"


@pytest.fixture
def stack(tmp_path: Path, cluster_username: str) -> Iterator[Stack]:
    """The stack, up; always taken down, and nothing of it may be left. The trainee's
    Unix account exists before the start: the containers see the host's /etc/passwd as
    it was then (compose.yaml says why)."""
    remove_stale_stacks()
    began = time.monotonic()
    images = build_images()
    built = time.monotonic() - began
    the_stack = Stack(tmp_path, images, site_settings())
    timings = the_stack.timings
    timings["images"] = built
    try:
        began = time.monotonic()
        the_stack.compose("up", "--detach")
        timings["up -d"] = time.monotonic() - began
        timings["first page"] = timings["up -d"] + the_stack.wait_for_page("/login/")
        yield the_stack
    finally:
        began = time.monotonic()
        the_stack.down()
        timings["down"] = time.monotonic() - began
        print("compose stack: " + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items()))
    assert the_stack.leftovers() == [], "compose down -v left these behind"


def site_settings() -> dict[str, str]:
    """site.env of the test's stack: the dev cluster, and secrets from files. The
    addresses (database, Redis, the web server, the jobs' callback) are
    compose.hostnet.yaml's."""
    return {
        "ALLOWED_HOSTS": f"127.0.0.1,localhost,{bridge_address()}",
        "SECRET_KEY_FILE": "/run/secrets/django_secret_key",
        "DB_NAME": "storagelab",
        "DB_USER": "storagelab",
        "DB_PASSWORD_FILE": "/run/secrets/db_password",
        "SLURMRESTD_URL": settings.SLURMRESTD_URL,
        "SLURM_JWT_KEY_FILE": "/run/secrets/slurm_jwt_key",
        "SLURM_PARTITION": settings.SLURM_PARTITION,
        "SLURM_CLUSTER_NAME": settings.SLURM_CLUSTER_NAME,
        "SITE_PROFILE": "dev",
        # A test's stack on two cores beside the dev site, not a class's.
        "GUNICORN_WORKERS": "2",
        "CELERY_CONCURRENCY": "2",
    }


def make_trainee(stack: Stack, cluster_username: str) -> tuple[str, str]:
    """A login linked to the Unix account, made in the web container as an admin would:
    the account is checked there (full_clean: getent passwd through the container's NSS)."""
    username, password = unique_name("trainee"), secrets.token_urlsafe(16)
    stack.manage(
        "shell",
        "-c",
        "from django.contrib.auth.models import User\n"
        "from portal.models import ClusterAccount\n"
        f"user = User.objects.create_user({username!r}, password={password!r}, first_name='Ada')\n"
        f"account = ClusterAccount(user=user, username={cluster_username!r})\n"
        "account.full_clean()\n"
        "account.save()\n",
    )
    return username, password


def runs_until_ended(stack: Stack, portal: httpx.Client, count: int, timeout: float) -> dict:
    """The runs panel of 1a, polled as the page does, until `count` runs have ended and
    each completed one shows its figure (it comes with the result, after the status):
    {target name: (status, write MiB/s as shown)}."""
    deadline = time.monotonic() + timeout
    while True:
        page = portal.get("/lab/1a/")
        assert page.status_code == 200
        runs = {name: (status, mib_s.strip()) for name, status, mib_s in RUN_ROW.findall(page.text)}
        settled = [
            s for s, mib_s in runs.values() if s in ENDED and (s != "completed" or mib_s != "–")
        ]
        if len(runs) == len(settled) == count:
            return runs
        # A worker or beat that cannot start would leave the runs queued until the timeout.
        assert not (crashed := stack.crashed()), f"services down: {crashed}"
        assert time.monotonic() < deadline, f"runs not ended after {timeout:.0f} s: {runs}"
        time.sleep(1)


def check_my_job(portal: httpx.Client, log: Path, timeout: float) -> str:
    """The page of a check of `log`, uploaded as the form does, once it is read."""
    page = portal.get("/check-my-job/")
    assert page.status_code == 200
    answer = portal.post(
        "/check-my-job/upload",
        data={"csrfmiddlewaretoken": portal.cookies["csrftoken"]},
        files={"log": (log.name, log.read_bytes(), "application/octet-stream")},
    )
    assert answer.status_code == 302, answer.text[:2000]
    deadline = time.monotonic() + timeout
    while True:
        page = portal.get(answer.headers["location"])
        assert page.status_code == 200
        if "Reading the log" not in page.text:
            return page.text
        assert time.monotonic() < deadline, "the log was not read"
        time.sleep(0.5)


def test_the_compose_stack_runs_1a_on_two_targets(stack: Stack, cluster_username: str) -> None:
    try:
        stack.manage("load_site_profile", "dev")
        username, password = make_trainee(stack, cluster_username)
        with httpx.Client(base_url=stack.url, follow_redirects=False, timeout=30) as portal:
            health = portal.get("/healthz")
            assert (health.status_code, health.text) == (200, "ok\n"), "the stack is not healthy"
            log_in(portal, username, password)

            began = time.monotonic()
            started = portal.post(
                "/lab/1a/runs",
                data={
                    "targets": ["scratch", "tmp"],
                    "csrfmiddlewaretoken": portal.cookies["csrftoken"],
                },
            )
            assert started.status_code == 302, started.text
            runs = runs_until_ended(stack, portal, count=2, timeout=120)
            stack.timings["1a runs"] = time.monotonic() - began

            # Check my job: the darshan worker's reader, as the sandbox user, in its image.
            began = time.monotonic()
            checked = check_my_job(portal, DARSHAN_LOG, timeout=60)
            stack.timings["Darshan check"] = time.monotonic() - began
            assert "random I/O" in checked and "16,384 writes of 4 KiB" in checked, checked
            assert not (crashed := stack.crashed()), f"services down: {crashed}"

        assert runs.keys() == {"$SCRATCH", "$TMPDIR"}
        for target, (status, figure) in runs.items():
            assert status == "completed", f"{target}: {status}"
            assert float(figure.replace(",", "")) > 0, f"{target}: {figure!r} MiB/s"
    except AssertionError:
        print(stack.logs())  # pytest shows it with the failure
        raise

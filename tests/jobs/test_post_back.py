"""Every job of the portal posts back one way (templates/jobs/post_back.sh, included by
each job script): a run's output and its Darshan logs, a storage scan's and a purge's
answer. Run in bash against a real HTTP server: what a busy or restarting portal
answers is asked again, a refusal is final, an answer already taken counts as home."""

import re
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from django.template.loader import render_to_string

from exercises.quotas import scans
from exercises.quotas.models import StorageScan
from jobs.scripts import render_script
from tests.quotas import pending_scan
from tests.runs import make_run

pytestmark = pytest.mark.django_db

POST = re.compile(r"^\s*(?:if )?post_back ", re.MULTILINE)  # a call, not its comment


class Portal(ThreadingHTTPServer):
    """Answers each post with the next of `answers` (the last one from then on), and
    keeps what came."""

    def __init__(self, answers: list[int]):
        super().__init__(("127.0.0.1", 0), Answering)
        self.answers = answers
        self.posts: list[tuple[dict, bytes]] = []


class Answering(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        portal: Portal = self.server  # type: ignore[assignment]
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        portal.posts.append((dict(self.headers), body))
        code = portal.answers[min(len(portal.posts), len(portal.answers)) - 1]
        self.send_response(code)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def portal() -> Iterator[Portal]:
    server = Portal([202])
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def post_back(portal: Portal, tmp_path: Path, answers: list[int], seconds: int = 60):
    """Runs the included post_back as a job script does: its secret in a private header
    file, `say` to stderr."""
    portal.answers = answers
    (tmp_path / "secret").write_text("X-Storagelab-Token: the-secret\n")
    (tmp_path / "body").write_bytes(b"the output")
    script = (
        'say() { echo "Storage Lab: $*" >&2; }\n'
        f"secret={tmp_path / 'secret'}\n"
        + render_to_string("jobs/post_back.sh")
        + f"post_back http://127.0.0.1:{portal.server_port}/x {tmp_path / 'body'} {seconds} "
        'result -H "X-Benchmark-Exit: 3"\n'
    )
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)


def test_a_busy_portal_is_asked_again_until_it_takes_the_post(portal, tmp_path) -> None:
    done = post_back(portal, tmp_path, [503, 429, 202])

    assert done.returncode == 0 and done.stderr == ""
    assert len(portal.posts) == 3
    headers, body = portal.posts[-1]
    assert body == b"the output"
    assert headers["X-Storagelab-Token"] == "the-secret" and headers["X-Benchmark-Exit"] == "3"


@pytest.mark.parametrize(
    ("answer", "status", "said"),
    [
        (403, 1, "the portal refused the result (HTTP 403)"),
        (413, 1, "the portal refused the result (HTTP 413)"),
        (409, 0, "the portal had this result already"),
    ],
)
def test_a_refusal_is_final_and_a_post_taken_already_is_home(
    portal, tmp_path, answer: int, status: int, said: str
) -> None:
    done = post_back(portal, tmp_path, [answer])

    assert (done.returncode, len(portal.posts)) == (status, 1)
    assert said in done.stderr


def test_it_gives_up_after_its_seconds_and_says_so(portal, tmp_path) -> None:
    done = post_back(portal, tmp_path, [503], seconds=1)

    assert done.returncode == 1
    assert "could not send the result to the portal for 1 s (last answer: 503)" in done.stderr


def jobs_scripts(account, disk_target, settings) -> dict[str, str]:
    settings.RUN_DARSHAN_RUNTIME = "/usr/lib/libdarshan.so"
    scan = pending_scan(account)
    purge = pending_scan(account, token="purge-secret")
    StorageScan.objects.filter(pk=purge.pk).update(kind=StorageScan.Kind.PURGE)
    purge.refresh_from_db()
    return {
        "run": render_script(make_run(account, disk_target)),
        "scan": scans.render_script(scan, [disk_target]),
        "purge": scans.render_script(purge, [disk_target]),
    }


def test_every_job_script_posts_through_the_one_include_and_no_loop_of_its_own(
    make_user, disk_target, settings
) -> None:
    scripts = jobs_scripts(make_user("sl-poster").cluster_account, disk_target, settings)

    include = render_to_string("jobs/post_back.sh")
    for kind, script in scripts.items():
        assert script.count(include) == 1, kind
        assert script.count("curl ") == 1, kind  # the include's, and no other
        checked = subprocess.run(["bash", "-n"], input=script, text=True, capture_output=True)
        assert checked.returncode == 0, (kind, checked.stderr)
    # A run posts its output, then its Darshan logs (or why there are none).
    calls = {kind: len(POST.findall(script)) for kind, script in scripts.items()}
    assert calls == {"run": 3, "scan": 1, "purge": 1}

"""What the job script does on the node, with other users on it: the run's secret
never shows on a command line, the run works only in a directory that is the user's
alone, and it makes no files where the filesystem has no inodes left for them (real
jobs on the dev cluster, real Unix accounts)."""

import http.server
import io
import pwd
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from exercises.catalogue.models import StorageTarget, StoredBy
from exercises.lab.start import start_exercise_run
from jobs.handover import submit
from jobs.models import RunStatus
from jobs.scripts import NO_ROOM, job_spec
from jobs.submission import start_run
from jobs.sync import sync
from tests.cluster import as_user, on_controller
from tests.cluster24 import bridge_address
from tests.conftest import DISK_ROOT
from tests.names import unique_name
from tests.runs import follow, make_run, small_workload

pytestmark = pytest.mark.django_db(transaction=True)

TOKEN = "a-secret-only-the-job-and-the-portal-know-0123456789"


class HoldingPortal(http.server.ThreadingHTTPServer):
    """Takes the job's result post and holds the answer until released, so that the
    test can look at the node's processes while curl is still sending."""

    def __init__(self) -> None:
        # On this host's address on the cluster's network: the node's curl posts there.
        super().__init__((bridge_address(), 0), HoldingHandler)
        self.received = threading.Event()
        self.release = threading.Event()
        self.headers: dict[str, str] = {}

    @property
    def url(self) -> str:
        return f"http://{self.server_address[0]}:{self.server_address[1]}"


class HoldingHandler(http.server.BaseHTTPRequestHandler):
    server: HoldingPortal

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.server.headers = dict(self.headers)
        self.server.received.set()
        self.server.release.wait(timeout=20)
        self.send_response(202)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def holding_portal(live_portal, settings) -> Iterator[HoldingPortal]:
    server = HoldingPortal()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    settings.PORTAL_CALLBACK_URL = server.url
    yield server
    server.release.set()
    server.shutdown()


def command_lines() -> dict[int, str]:
    """Every process's command line, as `ps` shows it to any user."""
    lines = {}
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                raw = (proc / "cmdline").read_bytes()
            except OSError:
                continue  # ended meanwhile
            lines[int(proc.name)] = raw.replace(b"\0", b" ").decode(errors="replace")
    return lines


def test_the_result_secret_is_on_no_command_line_while_it_is_sent(
    holding_portal: HoldingPortal, trainee_account, disk_target, monkeypatch
) -> None:
    monkeypatch.setattr("jobs.submission.secrets.token_urlsafe", lambda nbytes=32: TOKEN)
    run = start_run(trainee_account, disk_target, small_workload(), time_limit_minutes=2)

    assert holding_portal.received.wait(timeout=60), "the job never posted its result"
    seen = command_lines()  # curl is sending right now
    holding_portal.release.set()

    assert holding_portal.headers.get("X-Storagelab-Token") == TOKEN  # it was sent...
    assert not [line for line in seen.values() if TOKEN in line]  # ...from no command line
    curls = [line for line in seen.values() if line.startswith("curl ")]
    assert curls and all(line.startswith("curl -q ") for line in curls), curls
    assert "HOME" not in job_spec(run, "", TOKEN).environment


@pytest.fixture
def shared_parent() -> Iterator[Path]:
    """A directory every user may write to, as /tmp is (sticky, mode 1777), where the
    cluster's nodes see it too (the dev site's disk root, which they mount)."""
    parent = DISK_ROOT / unique_name("slt-shared")
    parent.mkdir(mode=0o1777)
    parent.chmod(0o1777)
    yield parent
    shutil.rmtree(parent, ignore_errors=True)


def target_in(parent: Path, site) -> StorageTarget:
    return StorageTarget.objects.create(
        profile=site,
        key=unique_name("shared"),
        name="$SHAREDTMP",
        filesystem="ext4",
        path_template=f"{parent}/{{user}}",
    )


def test_a_target_directory_another_user_made_is_refused_and_nothing_runs(
    live_portal, trainee_account, make_cluster_username, shared_parent, site
) -> None:
    intruder = make_cluster_username()
    target = target_in(shared_parent, site)
    planted = shared_parent / trainee_account.username
    as_user(intruder, "mkdir", "-m", "777", str(planted))  # before the trainee's first run
    run = make_run(trainee_account, target, time_limit_minutes=2)

    submit(run.pk)
    (run,) = follow(run)

    assert run.status == RunStatus.FAILED
    assert "be yours alone" in run.status_reason
    assert not Path(run.run_directory).exists()  # the benchmark never wrote there


def next_job_ids(user: str, count: int = 60) -> range:
    """The ids Slurm hands out next (it counts up): those after a job `user` submits."""
    said = on_controller(
        "sbatch", "--parsable", "--partition=debug", "--output=/dev/null", "--chdir=/",
        "--wrap=true", user=user,
    ).stdout  # fmt: skip
    first = int(said.split(";")[0]) + 1
    return range(first, first + count)


def test_a_link_planted_as_the_jobs_output_file_is_never_followed(
    live_portal, trainee_account, make_cluster_username, shared_parent, site
) -> None:
    """Another user owns the directory the trainee's path names (a shared parent such as
    /tmp) and plants, under every name the job's output file could take, a link to the
    trainee's ~/.bashrc: Slurm, opening that file before the script checks anything,
    would truncate it. The job's output goes nowhere until the script has checked."""
    intruder = make_cluster_username()
    target = target_in(shared_parent, site)
    planted = shared_parent / trainee_account.username
    as_user(intruder, "mkdir", "-m", "777", str(planted))
    run = make_run(trainee_account, target, time_limit_minutes=2)
    bashrc = Path(pwd.getpwnam(trainee_account.username).pw_dir) / ".bashrc"
    before = bashrc.read_bytes()
    assert before  # useradd's skeleton
    coming = next_job_ids(intruder)
    for job_id in coming:
        as_user(intruder, "ln", "-s", str(bashrc), str(planted / f"{run.job_name}-{job_id}.out"))

    submit(run.pk)
    (run,) = follow(run)

    assert run.slurm_job_id in coming, "other jobs took the planted ids: plant more"
    assert run.status == RunStatus.FAILED and "be yours alone" in run.status_reason
    assert bashrc.read_bytes() == before


def test_a_directory_above_the_target_that_others_may_write_to_is_refused(
    live_portal, trainee_account, site
) -> None:
    """The trainee's own directory, in a parent every user may write to without the
    sticky bit: another user could rename it away and put theirs in its place."""
    parent = Path("/tmp") / unique_name("slt-open")
    parent.mkdir()
    parent.chmod(0o777)
    try:
        as_user(
            trainee_account.username, "mkdir", "-m", "700", str(parent / trainee_account.username)
        )
        run = make_run(trainee_account, target_in(parent, site), time_limit_minutes=2)

        submit(run.pk)
        (run,) = follow(run)

        assert run.status == RunStatus.FAILED
        assert "as every directory above it" in run.status_reason
        assert not Path(run.run_directory).exists()
    finally:
        shutil.rmtree(parent, ignore_errors=True)


def test_an_existing_run_directory_is_never_reused_nor_removed(
    live_portal, trainee_account, disk_target
) -> None:
    run = make_run(trainee_account, disk_target, time_limit_minutes=2)
    as_user(trainee_account.username, "mkdir", run.run_directory)
    as_user(trainee_account.username, "touch", f"{run.run_directory}/keep-me")

    submit(run.pk)
    (run,) = follow(run)

    assert run.status == RunStatus.FAILED and "must not exist yet" in run.status_reason
    assert Path(run.run_directory, "keep-me").exists()


def test_a_target_under_a_shared_parent_works_when_its_directory_is_the_users_own(
    live_portal, trainee_account, shared_parent, site
) -> None:
    target = target_in(shared_parent, site)
    as_user(
        trainee_account.username,
        "mkdir",
        "-m",
        "700",
        str(shared_parent / trainee_account.username),
    )
    run = make_run(trainee_account, target, time_limit_minutes=2)

    submit(run.pk)
    (run,) = follow(run)

    assert run.status == RunStatus.COMPLETED, run.status_reason
    assert run.result.write_mib_s > 0
    assert not Path(run.run_directory).exists()


def test_an_output_the_job_could_not_post_is_attached_from_its_output_file(
    live_portal, trainee_account, disk_target, settings
) -> None:
    settings.PORTAL_CALLBACK_URL = "http://127.0.0.1:9"  # nobody listens: every post fails
    settings.RESULT_RETRY_SECONDS = 3
    run = make_run(trainee_account, disk_target, time_limit_minutes=2)
    submit(run.pk)
    (run,) = wait_for_status(run, RunStatus.COMPLETED)
    assert run.result_received_at is None
    out = Path(run.target_directory) / f"{run.job_name}-{run.slurm_job_id}.out"
    assert "could not send the result to the portal for 3 s" in out.read_text()

    call_command("attach_result", str(run.key), stdout=io.StringIO())
    (run,) = follow(run)

    assert run.result.write_mib_s > 0 and run.benchmark_exit_code == 0
    with pytest.raises(CommandError):  # once: a second attach changes nothing
        call_command("attach_result", str(run.key), stderr=io.StringIO())


def wait_for_status(run, status: str, timeout: float = 90) -> list:
    """Runs the sync cycle until Slurm's word on the run's job is `status`."""
    deadline = time.monotonic() + timeout
    while True:
        sync()
        run.refresh_from_db()
        if run.status == status:
            return [run]
        assert time.monotonic() < deadline, f"run {run.status}, not {status}: {run.status_reason}"
        time.sleep(0.3)


def test_on_a_target_whose_blocks_are_what_it_stored_the_run_counts_them_with_du(
    live_portal, trainee_account, disk_target
) -> None:
    """ZFS's way (stored_by "du"): a file's blocks are what was stored. On ext4, which
    does not compress, the 4 MiB written take their 4 MiB (and a block or so more)."""
    disk_target.compression, disk_target.stored_by = "none (ext4 here)", StoredBy.DU
    disk_target.save()
    run = make_run(trainee_account, disk_target, time_limit_minutes=2)

    submit(run.pk)
    (run,) = follow(run)

    assert run.status == RunStatus.COMPLETED, run.status_reason or run.raw_output[-500:]
    space = run.result.space
    assert space.held == 4 * 2**20 and space.held <= space.stored <= space.held + 2**20
    assert not Path(run.run_directory).exists()


def test_a_run_where_btrfs_should_be_but_is_not_says_so_and_runs_nothing(
    live_portal, trainee_account, disk_target
) -> None:
    """A site that said stored_by "btrfs" of a directory on another filesystem (ext4
    here): the run's subvolume cannot be made, and the job says why."""
    disk_target.compression, disk_target.stored_by = "zstd", StoredBy.BTRFS
    disk_target.save()
    run = make_run(trainee_account, disk_target, time_limit_minutes=2)

    submit(run.pk)
    (run,) = follow(run)

    assert run.status == RunStatus.FAILED
    assert "its directory is not on btrfs" in run.status_reason, run.status_reason
    assert not Path(run.run_directory).exists()


def test_a_target_with_fewer_free_inodes_than_the_run_makes_runs_nothing_and_says_so(
    live_portal, make_cluster_username, make_user, dev_profile
) -> None:
    """Exercise 6 makes 1,600 files at once; the account's $TMPDIR (a tmpfs of its own,
    which the nodes see) is left 64 inodes. The job checks on its node before it makes
    anything, and the run says why nothing ran; a run of one file goes on there."""
    account = make_user(make_cluster_username()).cluster_account
    tmp = Path("/dev/shm/storagelab") / account.username
    subprocess.run(["mount", "-o", "remount,nr_inodes=64", str(tmp)], check=True)
    target = dev_profile.targets.get(key="tmp")
    many = start_exercise_run(account, dev_profile.exercises.get(key="6"), target)
    one = start_exercise_run(account, dev_profile.exercises.get(key="1a"), target)

    many, one = follow(many, one)

    assert many.status == RunStatus.FAILED and many.exit_code == NO_ROOM
    assert many.status_reason.startswith(
        "Nothing was run: when the job started, the target's filesystem had fewer free inodes"
    )
    assert many.result_received_at is None
    assert one.status == RunStatus.COMPLETED and one.result.write_mib_s > 0, one.status_reason
    assert list(tmp.iterdir()) == []  # nothing of either run is left

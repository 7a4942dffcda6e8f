"""Starting a replay of a checked job (jobio/replays.py): one run per ticked target, in
the user's slots; one replay going per user, a double click taken for one, a daily
cap, and a log that cannot be replayed refused with its reason. No job reaches the
cluster here: the runs' submission waits for a commit these tests never make."""

from datetime import timedelta

import pytest
from django.utils import timezone

from exercises.advisor.job_io import SIZE_BINS, JobIO
from exercises.catalogue.models import SiteProfile, StorageTarget
from jobio.models import CheckSource, JobCheck, Replay
from jobio.replays import ReplayRefused, start_replay, time_limit_minutes
from jobs.engines import Workload
from jobs.models import BenchmarkRun, RunStatus
from jobs.room import files_at_once, need
from tests.jobio.logs import checked
from tests.quotas import fill

KiB, MiB, GiB = 2**10, 2**20, 2**30


@pytest.fixture
def targets(dev_profile) -> list:
    return list(dev_profile.targets.order_by("order"))


def test_a_replay_runs_once_on_each_ticked_target_as_the_user_and_counts_for_no_exercise(
    ada, targets, settings
) -> None:
    settings.REPLAY_SECONDS = 3
    replay, started = start_replay(ada, checked(ada), targets)

    assert started
    runs = list(replay.runs.select_related("target").order_by("target__order"))
    assert [run.target.key for run in runs] == [t.key for t in targets]
    assert {run.cluster_username for run in runs} == {"sl-ada"}
    assert {(run.exercise_id, run.course_id, run.calibration_id) for run in runs} == {
        (None, None, None)
    }
    workload = Workload.model_validate(runs[0].workload)
    assert (workload.block_size, workload.seconds, workload.direct) == (4096, 3, True)
    assert replay.engine == "fio" and replay.job_bytes == 64 * MiB
    assert "requests of 4 KiB" in replay.kept
    # Within the user's slots, as a lab start's runs: the rest wait for a free one.
    assert all(run.status in (RunStatus.QUEUED, RunStatus.WAITING) for run in runs)


def test_a_second_click_on_the_same_check_gets_the_same_replay(ada, targets) -> None:
    check = checked(ada)
    first, _ = start_replay(ada, check, targets)

    again, started = start_replay(ada, check, targets)

    assert (again.pk, started) == (first.pk, False)
    assert BenchmarkRun.objects.filter(user=ada).count() == len(targets)


def test_one_replay_goes_at_a_time(ada, targets) -> None:
    start_replay(ada, checked(ada), targets)

    with pytest.raises(ReplayRefused, match="A replay of yours is still running"):
        start_replay(ada, checked(ada, "sequential-1m"), targets)
    assert Replay.objects.filter(user=ada).count() == 1


def test_a_double_click_long_after_is_refused_while_the_first_still_runs(
    ada, targets, settings
) -> None:
    check = checked(ada)
    first, _ = start_replay(ada, check, targets)
    Replay.objects.filter(pk=first.pk).update(
        created_at=timezone.now() - timedelta(seconds=settings.START_AGAIN_SECONDS + 1)
    )
    with pytest.raises(ReplayRefused, match="still running"):
        start_replay(ada, check, targets)


def test_the_daily_cap_refuses_the_next_replay_and_says_when(ada, targets, settings) -> None:
    settings.REPLAYS_PER_DAY = 2
    for _ in range(2):
        replay, _ = start_replay(ada, checked(ada), targets[:1])
        replay.runs.update(status=RunStatus.COMPLETED)

    with pytest.raises(ReplayRefused, match="2 replays in the last 24 hours.*tomorrow"):
        start_replay(ada, checked(ada), targets[:1])
    # A day later, it starts.
    Replay.objects.update(created_at=timezone.now() - timedelta(days=1, seconds=1))
    assert start_replay(ada, checked(ada), targets[:1])[1]


def test_a_log_without_io_is_refused_with_its_reason_and_starts_nothing(ada, targets) -> None:
    with pytest.raises(ReplayRefused, match="no reads or writes of files"):
        start_replay(ada, checked(ada, "no-io"), targets)
    assert not Replay.objects.exists() and not BenchmarkRun.objects.exists()


def test_a_user_without_a_cluster_account_is_told_whom_to_ask(make_user, targets) -> None:
    nobody = make_user()
    with pytest.raises(ReplayRefused, match="no cluster account"):
        start_replay(nobody, checked(nobody), targets)
    assert not Replay.objects.exists()


def test_no_target_ticked_starts_nothing(ada) -> None:
    with pytest.raises(ReplayRefused, match="Choose at least one"):
        start_replay(ada, checked(ada), [])


def test_a_timed_replay_gets_a_limit_of_minutes_not_hours() -> None:
    timed = Workload(pattern="random", block_size=4096, processes=1, size_per_process=MiB)
    assert time_limit_minutes(timed.model_copy(update={"seconds": 3})) == 2
    assert time_limit_minutes(timed.model_copy(update={"seconds": 60})) == 5
    assert time_limit_minutes(timed) == 10  # a replay made before replays were timed
    # Writes then reads of 256 MiB, each 3 s: once through its bytes at 5 MiB/s, thrice.
    both = timed.model_copy(update={"seconds": 3, "read_back": True, "size_per_process": 256 * MiB})
    assert time_limit_minutes(both) == 4
    # mdtest's 100 rounds of at most 1 s, four phases each: bounded, if long.
    files = Workload(pattern="sequential", block_size=16384, processes=1, files_per_process=1000,
                     size_per_process=1000 * 16384, seconds=1, iterations=100)  # fmt: skip
    assert time_limit_minutes(files) == 22


def test_a_target_of_another_site_starts_nothing(ada, targets) -> None:
    other = StorageTarget.objects.create(
        profile=SiteProfile.objects.create(name="elsewhere", title="Elsewhere"),
        key="lustre", name="$LUSTRE", filesystem="Lustre", path_template="/lustre/{user}",
    )  # fmt: skip
    with pytest.raises(ReplayRefused, match=r"\$LUSTRE is not a storage target of this site"):
        start_replay(ada, checked(ada), [*targets[:1], other])
    assert not Replay.objects.exists()


def million_tiny_files(user) -> JobCheck:
    """A check of a job whose 8 processes each wrote 125,000 files of 512 B: a million
    files, 512 MB."""
    io = JobIO(
        job_id=9, uid=1000, nprocs=8, run_time_s=600.0, exe="./unpack",
        bytes_written=512 * 10**6, bytes_read=0, writes=10**6, reads=0,
        write_sizes=(0, 10**6) + (0,) * (len(SIZE_BINS) - 2), read_sizes=(0,) * len(SIZE_BINS),
        sequential_requests=0, consecutive_requests=0, first_requests=10**6, files=10**6,
        shared_files=0, footprint_bytes=512 * 10**6, meta_time_s=500.0, io_time_s=60.0,
        common_sizes=((512, 10**6),), syncs=0,
    )  # fmt: skip
    return JobCheck.objects.create(
        user=user, source=CheckSource.UPLOAD, label="Upload: unpack", io=io.to_json()
    )


def test_a_job_of_a_million_tiny_files_replays_no_more_files_at_once_than_the_bound(
    ada, dev_profile, settings
) -> None:
    """The bound is near the lab's largest exercise (6: 8 x 200 files), not 20,000: a
    replay costs a filesystem everyone shares no more inodes than the lab does."""
    settings.REPLAY_SECONDS = 3
    chosen = list(dev_profile.targets.filter(key__in=["global", "tmp"]))

    replay, _ = start_replay(ada, million_tiny_files(ada), chosen)

    assert replay.engine == "mdtest" and settings.REPLAY_MAX_FILES == 2000
    for run in replay.runs.all():
        workload = run.workload_params
        assert files_at_once(workload) <= 2000
        assert need(workload).bytes == files_at_once(workload) * 4 * KiB  # a block a file
    assert any("the most a replay keeps at once (2,000 files" in said for said in replay.not_kept)


def test_where_the_file_quota_is_unknown_the_page_says_the_bound_holds_the_replay(
    ada, dev_profile, settings
) -> None:
    settings.REPLAY_SECONDS = 3
    fill(ada.cluster_account, "global", MiB, bytes_hard=10 * GiB, files_used=10, files_hard=10**6)
    chosen = list(dev_profile.targets.filter(key__in=["global", "tmp"]))

    replay, _ = start_replay(ada, million_tiny_files(ada), chosen)

    bound = (
        "your file quota on $TMPDIR is not known here, so the replay makes at most 2,000 "
        "files there at once (the site's bound)"
    )
    assert bound in replay.sized["tmp"]
    assert "file quota" not in replay.sized.get("global", "")


def test_a_replay_whose_files_the_file_quota_has_no_room_for_is_refused(
    ada, dev_profile, settings
) -> None:
    settings.REPLAY_SECONDS = 3
    fill(ada.cluster_account, "tmp", MiB, bytes_hard=2 * GiB, files_used=99_000, files_hard=10**5)

    with pytest.raises(ReplayRefused, match=r"needs 2,002 files on \$TMPDIR, but only 1,000 files"):
        start_replay(ada, million_tiny_files(ada), [dev_profile.targets.get(key="tmp")])

    assert not Replay.objects.exists() and not BenchmarkRun.objects.exists()

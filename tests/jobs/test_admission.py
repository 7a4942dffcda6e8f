"""jobs/admission.py: the rules every run passes whoever starts it (the lab, a replay,
a canary, a calibration round, `start_run`): the bound of files, the quota the quotas
app registers, the user's slots; a refusal saves nothing; and the named exemptions.
The canaries' exemption is tested with the canaries (tests/exercises/weather/)."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from exercises.calibration.rounds import start_round
from jobs import admission
from jobs.admission import Refused
from jobs.engines import Pattern, Workload
from jobs.models import BenchmarkRun, RunStatus
from jobs.room import FILE_BLOCK, files_at_once, need
from jobs.submission import start_run
from portal.units import GiB, KiB, MiB
from tests.quotas import dev_target, fill
from tests.runs import make_run

pytestmark = pytest.mark.django_db

ONE_STREAM = Workload(
    pattern=Pattern.SEQUENTIAL, block_size=MiB, processes=1, size_per_process=64 * MiB
)


def small_files(processes: int, files: int, size: int = 512) -> Workload:
    return Workload(
        pattern=Pattern.SEQUENTIAL,
        block_size=512,
        processes=processes,
        size_per_process=max(files * size, 64 * KiB),
        files_per_process=files,
    )


def test_a_run_the_quota_leaves_no_room_for_is_refused_by_start_run_too(ada_account) -> None:
    """Not only the lab's start: a run started any other way meets the same quota."""
    fill(ada_account, "scratch", 10 * GiB - 8 * MiB, bytes_hard=10 * GiB)

    with pytest.raises(Refused, match=r"This run needs 64 MiB on \$SCRATCH, but only 8 MiB"):
        start_run(ada_account, dev_target("scratch"), ONE_STREAM)

    assert not BenchmarkRun.objects.exists()


def test_runs_beyond_the_users_slots_wait_whoever_starts_them(ada_account, settings) -> None:
    settings.MAX_ACTIVE_RUNS_PER_USER = 1

    first = start_run(ada_account, dev_target("scratch"), ONE_STREAM)
    second = start_run(ada_account, dev_target("tmp"), ONE_STREAM)

    assert (first.status, second.status) == (RunStatus.QUEUED, RunStatus.WAITING)


def test_a_run_beyond_its_bound_of_files_is_refused_and_nothing_is_saved(ada_account) -> None:
    many = small_files(processes=8, files=300)  # 2,400 files at once

    with pytest.raises(Refused, match=r"2,400 files at once on \$SCRATCH, more than the 2,000"):
        start_run(ada_account, dev_target("scratch"), many, max_files=2000)

    assert not BenchmarkRun.objects.exists()
    assert start_run(ada_account, dev_target("scratch"), many, max_files=2400).pk


def test_the_quota_counts_a_whole_block_for_each_small_file(ada_account) -> None:
    """2,000 files of 512 B hold 1,000 KiB, and take 2,000 blocks of 4 KiB on the disk:
    with 4 MiB left, they do not fit."""
    fill(ada_account, "scratch", 10 * GiB - 4 * MiB, bytes_hard=10 * GiB)
    tiny = small_files(processes=1, files=2000)

    assert need(tiny).bytes == 2000 * FILE_BLOCK and need(tiny).files == 2000 + 2
    with pytest.raises(Refused, match=r"This run needs 7.81 MiB on \$SCRATCH, but only 4 MiB"):
        start_run(ada_account, dev_target("scratch"), tiny)


def test_files_at_once_are_each_processs_or_the_one_they_share() -> None:
    eight = small_files(processes=8, files=200)
    shared = ONE_STREAM.model_copy(update={"processes": 8, "file_per_process": False})

    assert files_at_once(eight) == 1600 and files_at_once(shared) == 1
    # A large file's blocks are its bytes: nothing is added to it.
    assert need(ONE_STREAM).bytes == 64 * MiB


def test_with_no_quota_rule_registered_nothing_is_admitted(ada_account, monkeypatch) -> None:
    """The quota is the app above's rule: without it admission refuses to guess."""
    monkeypatch.setattr(admission, "_quota_rules", [])

    with pytest.raises(ImproperlyConfigured, match="No quota rule is registered"):
        start_run(ada_account, dev_target("scratch"), ONE_STREAM)


def test_a_calibration_rounds_runs_hold_no_slot_of_their_starter(
    make_user, dev_profile, settings
) -> None:
    """Exemption `slots=False`: a round paces itself (CALIBRATION_PARALLEL); a staff
    member's own run going does not make it wait."""
    settings.MAX_ACTIVE_RUNS_PER_USER = 1
    settings.CALIBRATION_PARALLEL = 2
    staff = make_user("sl-calib", staff=True)
    make_run(staff.cluster_account, dev_target("home"), status=RunStatus.RUNNING)

    round_ = start_round(
        staff, dev_profile, repeat=1, exercise_keys=["1a"], target_keys=["global", "tmp"]
    )

    statuses = list(round_.runs.order_by("pk").values_list("status", flat=True))
    assert statuses == [RunStatus.QUEUED, RunStatus.QUEUED]

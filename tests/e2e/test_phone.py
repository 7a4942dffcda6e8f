"""The portal on a phone (390 × 844): every main page a trainee, an instructor and
staff use reads whole. No word or number runs past the screen's right edge or is cut
by a box that scrolls or hides its overflow (a table wider than the screen stacks
its rows instead). Full-page screenshots of each, for a person to look at."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission
from django.utils import timezone
from playwright.sync_api import Browser, expect

from exercises.advisor.job_io import JobIO
from exercises.calibration.models import Calibration
from exercises.catalogue.models import MeasuredReference
from exercises.courses.models import Course, Enrollment
from jobio.models import JobCheck, Replay
from jobio.replay import replay_of
from jobio.sandbox import parse
from jobs.models import BenchmarkRun, RunResult, RunStatus
from portal.models import ClusterAccount
from portal.units import GiB
from tests.e2e.browser import PHONE, ask_the_advisor, log_in, reads_whole_on_a_phone
from tests.jobio.logs import log
from tests.quotas import fill
from tests.runs import make_run, make_runs


@pytest.mark.django_db(transaction=True)
def test_every_main_page_reads_whole_on_a_phone(
    live_server, dev_profile, ada, ada_account, make_user, browser: Browser
) -> None:
    make_runs(ada_account, dev_profile, 8)  # 1a, twice on every target, with figures
    fill(ada_account, "scratch", 3 * GiB, bytes_hard=10 * GiB)
    instructor = make_user("sl-phone-inst")
    instructor.user_permissions.add(Permission.objects.get(codename="teach_course"))
    course = Course.objects.create(title="Storage 101", profile=dev_profile)
    course.instructors.add(instructor)
    course.exercises.set(dev_profile.exercises.all())
    course.targets.set(dev_profile.targets.all())
    Enrollment.objects.create(course=course, user=ada)
    BenchmarkRun.objects.filter(user=ada).update(course=course)
    run = BenchmarkRun.objects.filter(user=ada).first()
    check = JobCheck.objects.create(
        user=ada, source="upload", label="random-4k.darshan", io=_job_io("random-4k")
    )
    staff = make_user(staff=True)
    ClusterAccount.objects.create(user=staff, username="sl-phone-staff")
    _calibrated(dev_profile, staff)
    replay = _replayed(check, ada_account, dev_profile)
    cut: list[str] = []

    trainee_page = browser.new_context(viewport=PHONE).new_page()
    log_in(trainee_page, live_server.url, ada)
    for name, path in (
        ("lab-index", "/lab/"),
        ("lab", "/lab/1a/"),  # the exercise, with the list of her runs
        ("run", f"/jobs/runs/{run.key}/"),
        ("storage", "/storage/"),
        ("check-my-job", "/check-my-job/"),
        ("check-my-job-result", f"/check-my-job/{check.pk}/"),
        ("replay", f"/check-my-job/replays/{replay.pk}/"),  # six targets, staging on one
        ("courses", "/courses/"),
        ("course", f"/courses/{course.pk}/"),
        ("advisor", "/advisor/"),
    ):
        trainee_page.goto(live_server.url + path)
        cut += reads_whole_on_a_phone(trainee_page, name)
    ask_the_advisor(trainee_page, data_gib="10", node_gib="64", app_gib="32")
    expect(trainee_page.locator("#advice ol.ranking > li").first).to_be_visible()
    cut += reads_whole_on_a_phone(trainee_page, "advisor-answer")

    # A newcomer without a course or a run: the prediction form, a line per target of
    # the site's six.
    newcomer = browser.new_context(viewport=PHONE).new_page()
    log_in(newcomer, live_server.url, make_user())
    newcomer.goto(f"{live_server.url}/lab/1a/")
    expect(newcomer.locator("#predict select")).to_have_count(2 * dev_profile.targets.count())
    cut += reads_whole_on_a_phone(newcomer, "lab-predict")

    teacher = browser.new_context(viewport=PHONE).new_page()
    log_in(teacher, live_server.url, instructor)
    for name, path in (
        ("course-overview", f"/courses/{course.pk}/overview"),
        ("course-overview-all", f"/courses/{course.pk}/overview?exercise=all"),
        ("participant", f"/courses/{course.pk}/participants/{ada.pk}/"),
        ("discussion", f"/courses/{course.pk}/discussion/1a"),
        ("discussion-large", f"/courses/{course.pk}/discussion/1a?view=large"),
    ):
        teacher.goto(live_server.url + path)
        cut += reads_whole_on_a_phone(teacher, name)

    admin = browser.new_context(viewport=PHONE).new_page()
    log_in(admin, live_server.url, staff)
    admin.goto(f"{live_server.url}/lab/calibration/")
    cut += reads_whole_on_a_phone(admin, "calibration")
    log_out = admin.get_by_role("button", name="Log out").bounding_box()
    assert log_out["x"] + log_out["width"] <= PHONE["width"]  # the header wraps

    assert not cut, "\n".join(cut)


def _job_io(name: str) -> dict:
    """A Darshan log of tests/jobio/logs read as the worker reads it, in the sandbox."""
    return parse(log(name), seconds=20, memory_bytes=768 * 2**20, max_bytes=64 * 2**20).to_json()


def _replayed(check, account, profile) -> Replay:
    """The check replayed on every target, each run completed with a figure."""
    planned = replay_of(JobIO.from_json(check.io), seconds=3)
    replay = Replay.objects.create(
        user=account.user, check_of=check, engine=planned.engine,
        workload=planned.workload.model_dump(mode="json"), job_bytes=planned.job_bytes,
        replay_bytes=planned.replay_bytes, kept=list(planned.kept),
        not_kept=list(planned.not_kept),
    )  # fmt: skip
    for n, target in enumerate(profile.targets.all()):
        run = make_run(account, target, replay=replay, status=RunStatus.COMPLETED)
        RunResult.objects.create(
            run=run, engine="fio", processes=1, write_bytes_per_s=(2 + 300 * n) * 2**20
        )
    return replay


def _calibrated(profile, staff) -> None:
    """A finished calibration of 1a on every target, its summary and its figures."""
    targets = list(profile.targets.all())
    ended = timezone.now() - timedelta(hours=1)
    round_ = Calibration.objects.create(
        profile=profile,
        started_by=staff,
        repeat=3,
        exercise_keys=["1a"],
        target_keys=[t.key for t in targets],
        started_at=ended - timedelta(minutes=20),
        finished_at=ended,
        summary=(
            f"Plan: exercises 1a; targets {', '.join(t.key for t in targets)}; ×3, "
            f"{3 * len(targets)} runs.\nEnded {ended:%Y-%m-%d %H:%M}: {3 * len(targets) - 1} "
            f"of {3 * len(targets)} runs gave figures, 1 failed or gave none.\n1a on "
            f"{targets[0].name}: 1 of 3 runs gave no figure (1 timed_out); left out of its figures."
        ),
    )
    exercise = profile.exercises.get(key="1a")
    for i, target in enumerate(targets):
        low, median, high = 1000.0 * (i + 1), 1150.0 * (i + 1), 1300.0 * (i + 1)
        MeasuredReference.objects.create(
            calibration=round_, exercise=exercise, target=target, values=[low, median, high],
            median=median, low=low, high=high, measured_at=ended,
        )  # fmt: skip

"""Calibration for real: `manage.py calibrate --wait` runs 2 exercises on 2 targets
twice on the dev cluster, as a staff member's own cluster account, two at a time,
and the lab page then shows the measured reference beside the published one."""

import io
import re

import pytest
from django.core.management import call_command
from django.test import Client

from exercises.catalogue.models import MeasuredReference, ReferenceResult, Unit
from jobs.figures import shown
from jobs.models import RunStatus

pytestmark = pytest.mark.django_db(transaction=True)


def test_calibrate_wait_measures_the_site_and_the_lab_shows_it(
    sync_loop, dev_profile, cluster_username, make_user, settings
) -> None:
    settings.CALIBRATION_PARALLEL = 2
    staff = make_user(cluster_username, staff=True)
    out = io.StringIO()

    call_command(
        "calibrate", "--user", staff.username, "--repeat", "2", "--exercises", "1a,2a",
        "--targets", "scratch,tmp", "--wait", "--timeout", "240", stdout=out,
    )  # fmt: skip

    printed = out.getvalue()
    assert "8 of 8 runs gave figures, 0 failed or gave none" in printed, printed
    measured = MeasuredReference.objects.select_related("exercise", "target", "calibration")
    assert {(m.exercise.key, m.target.key) for m in measured} == {
        ("1a", "scratch"), ("1a", "tmp"), ("2a", "scratch"), ("2a", "tmp"),
    }  # fmt: skip
    round_ = measured[0].calibration
    runs = list(round_.runs.select_related("result"))
    assert len(runs) == 8 and all(r.status == RunStatus.COMPLETED for r in runs)
    assert {r.cluster_username for r in runs} == {cluster_username}
    # Paced: the third run was submitted only once one of the first two had ended.
    by_submission = sorted(runs, key=lambda r: r.submitted_at)
    assert by_submission[2].submitted_at >= min(r.ended_at for r in by_submission[:2])
    for m in measured:
        assert len(m.values) == 2 and 0 < m.low <= m.median <= m.high
        assert re.search(rf"{m.exercise.key}\s+\{m.target.name}\s+write bandwidth", printed)

    # The lab page: "Measured here" beside the published figure.
    one_a_tmp = measured.get(exercise__key="1a", target__key="tmp")
    ReferenceResult.objects.create(
        exercise=one_a_tmp.exercise, target=one_a_tmp.target, value=1234.0, unit=Unit.MIB_S
    )
    client = Client()
    client.force_login(make_user())
    page = client.get("/lab/1a/").content.decode()
    row = page[page.index('<a href="/storage/tmp/">') :]
    row = row[: row.index("</tr>")]
    low, high = shown(one_a_tmp.low), shown(one_a_tmp.high)
    expected = f"{shown(one_a_tmp.median)} ({low}–{high})"  # as every page writes a figure
    assert "1,234 MiB/s" in row and expected in row

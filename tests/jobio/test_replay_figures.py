"""A replay's answer in the job's terms (jobio/replay_figures.py), from runs whose
figures are set here: the job's bytes at each target's measured rate, staging onto a
node's own storage at the site's streaming figure, and the measurement believed where
Check my job's rules put another target first."""

import pytest

from exercises.advisor.facts import advice_for
from exercises.advisor.job_io import JobIO
from exercises.catalogue.models import MeasuredReference
from jobio.replay_figures import answer
from jobio.replays import start_replay
from jobs.models import RunResult, RunStatus
from tests.jobio.logs import checked

MiB = 2**20


@pytest.fixture
def stream(ada, dev_profile, settings):
    """A replay of fio's 2 GiB stream in 1 MiB writes on every dev target, for 3 s."""
    settings.REPLAY_SECONDS = 3
    replay, _ = start_replay(ada, checked(ada, "sequential-1m"), list(dev_profile.targets.all()))
    return replay


def measured(replay, mib_s: dict[str, float]) -> None:
    """The replay's runs completed with these write figures, by target key."""
    for run in replay.runs.select_related("target"):
        run.status = RunStatus.COMPLETED
        run.save(update_fields=["status"])
        RunResult.objects.create(
            run=run, engine="fio", processes=1, write_bytes_per_s=mib_s[run.target.key] * MiB
        )


def streaming_reference(profile, target_key: str, median: float) -> None:
    MeasuredReference.objects.create(
        exercise=profile.exercises.get(key="1a"),
        target=profile.targets.get(key=target_key),
        values=[median] * 3, median=median, low=median, high=median,
    )  # fmt: skip


FIGURES = {
    "home": 20, "global": 100, "scratch": 400, "tmp": 2048, "binfs": 200, "work": 50, "project": 90,
}  # fmt: skip


def test_the_jobs_bytes_at_each_rate_and_staging_at_the_sites_streaming_figure(
    stream, dev_profile
) -> None:
    streaming_reference(dev_profile, "scratch", 512)
    streaming_reference(dev_profile, "global", 128)
    measured(stream, FIGURES)

    found = answer(stream, dev_profile)

    rows = {row.target.key: row for row in found.rows}
    assert not found.going
    # 2 GiB at 100 MiB/s: 20.48 s; the replay ran 3 s, a seventh of the job's I/O.
    assert rows["global"].job_io_seconds == pytest.approx(20.48)
    assert rows["global"].seconds == 3
    assert rows["global"].scale == pytest.approx(2048 / 300)
    assert rows["global"].staging is None  # every node sees it
    # $TMPDIR: 1 s of I/O, and its 2 GiB of results copied out at $SCRATCH's 512 MiB/s.
    tmp = rows["tmp"]
    assert tmp.job_io_seconds == pytest.approx(1.0)
    assert tmp.staging.seconds == pytest.approx(4.0)
    assert tmp.total_seconds == pytest.approx(5.0)
    assert "$SCRATCH's 512 MiB/s" in tmp.staging.source
    assert "2 GiB of results back" in found.staged
    assert "input" not in found.staged  # the job read nothing: nothing to copy in
    assert found.fastest.target.key == "tmp"  # 5 s against $SCRATCH's 5.12
    assert found.chart["staging"][found.chart["labels"].index("$TMPDIR")] == 4.0


def test_where_the_rules_put_another_target_first_the_page_believes_the_measurement(
    stream, dev_profile
) -> None:
    io = JobIO.from_json(stream.check_of.io)
    ruled = advice_for(io, dev_profile).recommended[0]
    slowest_first = dict(FIGURES, home=4000) if ruled != "home" else dict(FIGURES, work=4000)
    measured(stream, slowest_first)

    found = answer(stream, dev_profile)

    assert found.agrees is False and found.fastest.target.key != ruled
    assert "Check my job's rules put" in found.verdict
    assert "Believe the measurement" in found.verdict


def test_where_they_agree_it_says_so(stream, dev_profile) -> None:
    io = JobIO.from_json(stream.check_of.io)
    ruled = advice_for(io, dev_profile).recommended[0]
    measured(stream, dict.fromkeys(FIGURES, 10) | {ruled: 4000})

    found = answer(stream, dev_profile)

    assert found.agrees is True and found.fastest.target.key == ruled
    assert found.verdict.endswith("first too.")


def test_while_a_run_goes_there_is_no_verdict_and_the_page_keeps_following(
    stream, dev_profile
) -> None:
    measured(stream, FIGURES)
    stream.runs.filter(target__key="home").update(status=RunStatus.RUNNING)

    found = answer(stream, dev_profile)

    assert found.going and found.verdict == "" and found.agrees is None
    home = next(row for row in found.rows if row.target.key == "home")
    assert home.job_io_seconds is None


def test_without_a_streaming_figure_staging_is_said_not_counted(stream, dev_profile) -> None:
    measured(stream, FIGURES)

    found = answer(stream, dev_profile)

    assert all(row.staging is None for row in found.rows)
    assert "$TMPDIR is a node's own storage" in found.staged
    assert "not counted" in found.staged

"""The advisor checks itself: a real run of every exercise of the dev profile, recorded
with Darshan on the live cluster, is read back into its I/O, and the advisor must
recognise it as that exercise and advise as the exercise's lesson says. A small repeat
of each (timed ones for 1 s instead of the lab's 2), on $SCRATCH: the I/O's shape,
not the figure, is what is checked."""

import pytest
from django.conf import settings

from exercises.advisor.facts import advice_for
from exercises.catalogue.lessons import claims_of
from jobs.models import BenchmarkRun
from jobs.submission import start_run
from tests.replay_check import io_of
from tests.runs import follow

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not settings.RUN_DARSHAN_RUNTIME, reason="the dev env names the runtime"),
]

# The page-cache trap times the cache, not the storage: a run of it is named 4a, and
# advised (as any job is) on the figures of the same writes with fsync.
NEVER_A_MODEL = {"4a"}
# What a log alone is taken for, where that is not its own exercise: 4b and 7 write as
# 1a does (the first of them in the lab's order), and the trap is never a model; 10b
# writes as 10a does (a log does not say how the file was laid out), 10c and 10d as
# 1b-ior (eight ranks, a file each: a log says neither the layout nor the nodes), and
# 11a and 11b as 1a (one process streaming: a log does not say whether data compresses).
BY_LOG_ALONE = {
    "4a": "1a", "4b": "1a", "7": "1a", "10b": "10a", "10c": "1b-ior", "10d": "1b-ior",
    "11a": "1a", "11b": "1a",
}  # fmt: skip
# What a log sees is what reached the files: with collective buffering one aggregator
# wrote 8b's whole file in large requests, the other ranks none, so its log is one
# process streaming (1a-ior's shape), whatever the ranks handed to MPI.
# A sweep of request sizes (9) is no model (a job is one workload, not six), and fio
# runs each size as a process of its own, one after the other: its log is six
# processes each streaming a file of its own, 1b's shape.
BY_WHAT_REACHED_THE_FILES = {"8b": "1a-ior", "9": "1b"}
# Which size is the sweep's most common one is a near tie: on $SCRATCH (2,000 requests a
# second) 4, 16, 64 and 256 KiB each get about 2,000 requests in their second, and
# whichever got a few more names the log. 4 KiB makes it 8a's (pieces of 4 KiB; a run
# under load did so), the larger ones 1b's: either is a name the log can bear.
TIED = {"9": {"1b", "8a"}}


def small(exercise):
    """The exercise as a short repeat: the same pattern, sizes and processes."""
    w = exercise.workload
    return w.model_copy(
        update={
            "seconds": 1 if w.seconds else None,
        }
    )


def test_every_dev_exercise_is_recognised_as_itself(
    live_portal, dev_profile, trainee_account, client
) -> None:
    target = dev_profile.targets.get(key="scratch")  # a disk: runs in memory are not recorded
    exercises = list(dev_profile.exercises.order_by("order"))
    # Runs of no exercise: the advice rests on the site's figures, not on these runs.
    # One run per workload: 7 repeats 1a's, and 10b and 10d, here where nothing is
    # spread, are 10a's and 10c's (their logs are named by the exercise asked about).
    workloads = [(e.runs_with, small(e)) for e in exercises]
    started = {}
    for engine, workload in workloads:
        what = (engine, workload.model_dump_json())
        if what not in started:
            started[what] = start_run(trainee_account, target, workload, engine=engine)
    finished = {run.pk: run for run in follow(*started.values(), timeout=240)}
    done = [finished[started[(e, w.model_dump_json())].pk] for e, w in workloads]
    in_memory = {t.key for t in dev_profile.targets.filter(in_memory=True)}

    table, syncs, shapes, collective = [], {}, {}, {}
    for exercise, run in zip(exercises, done, strict=True):
        key = exercise.key
        assert run.status == "completed", f"{key}: {run.status_reason or run.parse_error}"
        io = io_of(run)
        syncs[key] = io.syncs
        # What a wrong name would be judged on, for its failure message.
        shapes[key] = (
            f"{io.exe.split()[0] if io.exe else '?'}: {io.nprocs} ranks, {io.files} files "
            f"({io.shared_files} shared), {io.writes} writes of {io.typical_request_bytes} B, "
            f"{io.bytes_written} B written, {io.syncs} syncs, partial={io.partial}"
        )
        job = advice_for(io, dev_profile, ran=key)
        collective[key] = job.collective
        first = job.advice.ranking[0].target_key
        table.append((key, job.resembles.key if job.resembles else None, first, job.model.key))
    print("\nexercise → resembles → first target (advised on the figures of)")
    for row in table:
        print(" → ".join(str(cell) for cell in row))

    # What sets 4a apart from 4b, which writes the same file: no sync.
    assert syncs["4a"] == 0 and syncs["4b"] >= 1 and syncs["1a"] >= 1, syncs
    for key, resembles, first, model in table:
        # Named by what it ran: its I/O is as close to its own exercise as to any other
        # (a log alone is named as Check my job names it, and advised on its figures).
        seen = BY_WHAT_REACHED_THE_FILES.get(key, key)
        if resembles in TIED.get(key, ()):
            seen = resembles
        assert resembles == seen, (key, resembles, shapes[key])
        assert model == BY_LOG_ALONE.get(seen, seen), (key, model, shapes[key])
        # Advised as the lesson says: the first target is none the exercise shows slower
        # than another that keeps the job's data (memory is no place for a job's output,
        # whatever its speed: the advisor ranks it below for a job that writes). 4a's
        # lesson: a job that writes 64 MiB unsynced spends a few hundredths of its time
        # in I/O, and such a "light" job may well go to $HOME, as 4a's reading says of
        # "a program that writes a modest amount".
        claims = claims_of(dev_profile.exercises.get(key=key))
        slower = {
            c.slower.target
            for c in claims
            if c.faster.exercise == c.slower.exercise
            and c.faster.target not in in_memory
            and c.faster.target != c.slower.target  # one target at two request sizes: 9's
        }
        assert first not in slower, (key, first)
        if key in NEVER_A_MODEL:
            # Its data never synced is all the more a reason to keep it off memory.
            assert first not in in_memory, (key, first)

    # The ranks' small pieces of one shared file, in turns, are told to write together;
    # no other run is (8b's aggregator streamed).
    assert [key for key, said in collective.items() if said] == ["8a"], collective
    assert "Collective MPI-IO gathers such pieces" in collective["8a"]

    # The run page says so, and what Check my job would take the log for. It names a run
    # by its exercise, which these runs leave out so that their figures count in no
    # advice above: given now, as the lab gives it when it starts one.
    client.force_login(trainee_account.user)
    by_key = {e.key: run for e, run in zip(exercises, done, strict=True)}
    for exercise in exercises:
        BenchmarkRun.objects.filter(pk=by_key[exercise.key].pk).update(exercise=exercise)
    for key, model_says in [
        ("7", "names it 1a, whose requests look the same in a log"),
        ("4a", "names it 1a: it never takes the page-cache trap for the model"),
        ("2a", None),
    ]:
        page = client.get(f"/check-my-job/runs/{by_key[key].key}/io").content.decode()
        assert f"the I/O of exercise <strong>{key} · " in page, key
        if model_says:
            assert model_says in page, key
        else:
            assert 'id="io-model"' not in page, key

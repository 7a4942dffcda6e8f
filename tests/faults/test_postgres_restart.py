"""(b) PostgreSQL restarts mid-lab, while runs are being submitted and run. The
portal under test has a PostgreSQL cluster of its own (restarting the shared one
would break everybody's tests), set up as `make demo` sets up the real one; this
test reads it with plain SQL."""

import os
import subprocess

import psycopg
import pytest
from django.conf import settings

from jobs.slurm import get_client
from tests.faults.conftest import PASSWORD, PORTAL_ENV, TARGETS, TraineeBrowser
from tests.faults.services import ROOT, VENV, Portal, PrivatePostgres, wait_until

DB = "storagelab_faults"
CREATE_TRAINEE = """
from django.contrib.auth.models import User
from portal.models import ClusterAccount
user = User.objects.create_user({name!r}, password={password!r})
ClusterAccount.objects.create(user=user, username={cluster_username!r})
"""
RUNS = """
SELECT r.key, r.status, r.status_reason, r.slurm_job_id, r.cluster_username,
       res.write_bytes_per_s
FROM jobs_benchmarkrun r LEFT JOIN jobs_runresult res ON res.run_id = r.id
"""


@pytest.fixture
def private_postgres():
    postgres = PrivatePostgres()
    try:
        postgres.create(DB, "storagelab", "storagelab")
        yield postgres
    finally:
        postgres.destroy()


def test_a_postgres_restart_mid_lab_loses_no_run(
    private_postgres, private_redis, make_cluster_username, tmp_path
) -> None:
    db = {"DB_HOST": "127.0.0.1", "DB_PORT": str(private_postgres.port), "DB_NAME": DB}
    env = {**PORTAL_ENV, **db, "REDIS_URL": private_redis.url}
    cluster_username = make_cluster_username()
    manage(env, "migrate", "--no-input", "-v", "0")
    manage(env, "load_site_profile", "dev")
    code = CREATE_TRAINEE.format(
        name=f"u-{cluster_username}", password=PASSWORD, cluster_username=cluster_username
    )
    manage(env, "shell", "-c", code)
    portal = Portal(tmp_path, env)
    try:
        portal.start()
        ada_browser = TraineeBrowser(portal, None, username=f"u-{cluster_username}")

        response = ada_browser.start(*TARGETS)
        assert response.status_code == 200
        private_postgres.restart()

        # The first pages after the restart answer: no web worker keeps a dead connection.
        for _ in range(4):
            assert "Your runs" in ada_browser.panel()
        runs = wait_until("every run final", lambda: final_runs(private_postgres), 90, 0.5)
        assert ada_browser.panel().count("Completed") == len(TARGETS)
    finally:
        portal.stop()

    jobs = get_client().jobs(settings.SLURM_SERVICE_USER) or []
    assert len(runs) == len(TARGETS)
    for key, status, reason, job_id, username, write in runs:
        assert (status, reason) == ("completed", "")
        assert write > 0
        named = [job for job in jobs if job.name == f"storagelab-{key.hex[:12]}"]
        assert [job.job_id for job in named] == [job_id], "one Slurm job per run"
        assert named[0].user_name == username


def manage(env: dict[str, str], *args: str) -> None:
    subprocess.run(
        [VENV / "python", "manage.py", *args],
        cwd=ROOT,
        env={**os.environ, **env},
        check=True,
        timeout=120,
        stdout=subprocess.DEVNULL,
    )


def final_runs(postgres: PrivatePostgres) -> list[tuple] | None:
    url = f"host=127.0.0.1 port={postgres.port} dbname={DB} user=storagelab password=storagelab"
    with psycopg.connect(url, connect_timeout=2) as conn:
        runs = conn.execute(RUNS).fetchall()
    final = all(
        status not in ("queued", "submitted", "pending", "running")
        and (status != "completed" or write is not None)
        for _, status, _, _, _, write in runs
    )
    return runs if len(runs) == len(TARGETS) and final else None

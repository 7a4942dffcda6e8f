"""Records a live slurmrestd's answers as tests/jobs/recorded.py reads them: its OpenAPI
spec, and for one API version the ping, the job list, a job in each state, an unknown
job, refused tokens and headers, and a path it does not serve. Run by hand against a
cluster that runs (docker/cluster/start.sh, CLUSTER_SLURM= the release):

    .venv/bin/python tests/jobs/slurmrestd/record.py RELEASE VERSION

RELEASE names the folder (26.05), VERSION the API (v0.0.45). The jobs run as the
cluster's `slurmrestd` user in /tmp for a few seconds (the timed-out one for its one minute).
"""

import json
import sys
import time
from pathlib import Path

import httpx
import jwt

URL = "http://127.0.0.1:6821"
KEY = Path("/var/lib/storagelab/cluster/etc/jwt_hs256.key")
USER = "slurmrestd"  # Slurm refuses jobs of nobody; the image has this user
FINAL = {"COMPLETED", "FAILED", "TIMEOUT", "CANCELLED"}


def token(key: bytes, seconds: int = 300) -> str:
    now = int(time.time())
    return jwt.encode({"iat": now, "exp": now + seconds, "sun": USER}, key, algorithm="HS256")


def main(release: str, version: str) -> None:
    key = KEY.read_bytes()
    auth = {"X-SLURM-USER-NAME": USER, "X-SLURM-USER-TOKEN": token(key)}
    api = httpx.Client(base_url=f"{URL}/slurm/{version}", headers=auth, timeout=30)
    here = Path(__file__).resolve().parent / release
    folder = here / version.removeprefix("v")
    folder.mkdir(parents=True, exist_ok=True)
    statuses = {}

    def keep(name: str, answer: httpx.Response) -> None:
        statuses[name] = answer.status_code
        try:
            text = json.dumps(answer.json(), indent=2) + "\n"
            (folder / f"{name}.json").write_text(text)
        except ValueError:
            (folder / f"{name}.txt").write_text(answer.text.strip() + "\n")

    spec = httpx.get(f"{URL}/openapi/v3", headers=auth, timeout=60)
    (here / "openapi-v3.json").write_text(json.dumps(spec.json(), indent=1) + "\n")

    def submit(script: str, **job) -> int:
        body = {
            "job": {
                "name": "recorded",
                "partition": "debug",
                "current_working_directory": "/tmp",
                "environment": ["PATH=/usr/bin:/bin", "HOME=/tmp"],
                "time_limit": {"set": True, "number": 1},
                "script": f"#!/bin/sh\n{script}\n",
                **job,
            }
        }
        answer = api.post("/job/submit", json=body)
        answer.raise_for_status()
        return answer.json()["job_id"]

    def state(job_id: int) -> set[str]:
        return set(api.get(f"/job/{job_id}").json()["jobs"][0]["job_state"])

    def wait(job_id: int, wanted: set[str], seconds: float = 150) -> None:
        deadline = time.monotonic() + seconds
        while not state(job_id) & wanted:
            if time.monotonic() > deadline:
                raise SystemExit(f"job {job_id} never reached {wanted}")
            time.sleep(0.5)

    keep("slurm-ping", api.get("/ping"))
    completed, failed = submit("true"), submit("exit 1")
    timeout, running = submit("sleep 600"), submit("sleep 600")
    later = {"set": True, "number": int(time.time()) + 3600}
    pending = submit("true", begin_time=later)  # waits for its BeginTime
    wait(completed, FINAL)
    wait(failed, FINAL)
    wait(running, {"RUNNING"})
    keep("slurm-job-completed", api.get(f"/job/{completed}"))
    keep("slurm-job-failed", api.get(f"/job/{failed}"))
    keep("slurm-job-running", api.get(f"/job/{running}"))
    keep("slurm-job-pending", api.get(f"/job/{pending}"))
    keep("slurm-jobs", api.get("/jobs"))
    keep("slurm-job-unfound", api.get("/job/999999"))
    wait(timeout, {"TIMEOUT"})
    keep("slurm-job-timeout", api.get(f"/job/{timeout}"))
    api.delete(f"/job/{running}")
    api.delete(f"/job/{pending}")

    bare = httpx.Client(base_url=f"{URL}/slurm/{version}", timeout=30)
    forged = auth | {"X-SLURM-USER-TOKEN": token(b"not-the-key" * 3)}
    keep("slurm-jwt-invalid-token", bare.get("/jobs", headers=forged))
    keep("slurm-jwt-expired-token", bare.get("/jobs", headers=auth | {
        "X-SLURM-USER-TOKEN": token(key, -60)}))  # fmt: skip
    # 26.05 answers a ping with a refused token 200, the controller "not responding".
    keep("slurm-ping-token-refused", bare.get("/ping", headers=forged))
    keep("slurm-jwt-missing-headers", bare.get("/ping"))
    keep("slurm-jwt-invalid-headers", bare.get("/ping", headers={"X-SLURM-USER-NAME": USER}))
    keep("slurm-not-found", httpx.get(f"{URL}/slurm/v0.0.1/ping", headers=auth, timeout=30))
    print(json.dumps(statuses, indent=1))


if __name__ == "__main__":
    main(*sys.argv[1:3])

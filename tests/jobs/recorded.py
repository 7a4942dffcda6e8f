"""Real slurmrestd answers recorded from Slurm 24.05 to 26.05, and each release's
OpenAPI spec (22.05's has v0.0.38), for testing the versions that cannot run here.

`recorded(*names)` parametrizes a test over every (release, API version) pair whose
folder holds those files, with ids like "25.11-v0.0.44"; `FakeSlurmrestd` is an
httpx.MockTransport handler that answers from one pair's files.
"""

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import httpx
import pytest
from jsonschema import Draft4Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT4

from jobs.slurm import SlurmClient
from jobs.slurm.adapters import API_VERSIONS
from jobs.slurm.auth import Auth, StaticToken

RECORDINGS = Path(__file__).resolve().parent / "slurmrestd"
JOB_STATES = ("completed", "failed", "pending", "running", "timeout")
TOKEN = "recorded-test-token"
SPEC_URI = "urn:slurmrestd-openapi"


def _status(release: str, name: str) -> int:
    """The HTTP status each file was answered with; the files do not keep it. These
    are the codes recorded beside the same files (Slurm-web's tests/assets status.json):
    a bad token is 500 with error -1 in 24.05 and 511 with error 1007 from 24.11; an
    unknown job is 404 with a JSON body; missing or unusable headers are 401 text,
    500 in 25.11.0 (SchedMD bug 24052)."""
    if name in ("slurm-not-found", "slurm-job-unfound"):
        return 404
    if name.startswith("slurm-jwt-") and name.endswith("-headers"):
        return 500 if release == "25.11" else 401
    if name.startswith("slurm-jwt-"):
        return 500 if release == "24.05" else 511
    return 200


@cache
def _load(path: Path) -> Any:
    return json.loads(path.read_text())


@cache
def spec(release: str) -> dict[str, Any]:
    return _load(RECORDINGS / release / "openapi-v3.json")


def spec_versions(release: str) -> list[str]:
    """The API versions of the client that this release's slurmrestd serves."""
    served = {path.split("/")[2] for path in spec(release)["paths"] if path.startswith("/slurm/")}
    return [version for version in API_VERSIONS if version in served]


@dataclass(frozen=True, order=True)
class Recording:
    release: str  # "25.11"
    version: str  # "v0.0.44"

    def __str__(self) -> str:
        return f"{self.release}-{self.version}"

    @property
    def folder(self) -> Path:
        return RECORDINGS / self.release / self.version.removeprefix("v")

    def has(self, name: str) -> bool:
        return any((self.folder / f"{name}{ext}").exists() for ext in (".json", ".txt"))

    def body(self, name: str) -> dict[str, Any]:
        return _load(self.folder / f"{name}.json")

    def response(self, name: str, status: int | None = None) -> httpx.Response:
        """The recorded answer, with the status and content type slurmrestd sent."""
        status = status or _status(self.release, name)
        if (self.folder / f"{name}.json").exists():
            return httpx.Response(status, json=self.body(name))
        text = (self.folder / f"{name}.txt").read_text()
        return httpx.Response(status, text=text, headers={"content-type": "text/plain"})

    @property
    def served(self) -> list[str]:
        """What this recording's slurmrestd serves: its release's versions up to this one."""
        versions = spec_versions(self.release)
        return versions[versions.index(self.version) :]

    def raw_job(self, state: str) -> dict[str, Any]:
        return self.body(f"slurm-job-{state}")["jobs"][0]


def _all() -> list[Recording]:
    found = sorted(
        Recording(folder.parent.name, f"v{folder.name}")
        for folder in RECORDINGS.glob("*/0.0.*")
        if folder.is_dir()
    )
    if not found:
        # Parametrizing over nothing would pass every recorded test without running one.
        raise FileNotFoundError(f"no recorded slurmrestd responses under {RECORDINGS}")
    return found


def recordings(*names: str) -> list[Recording]:
    """Every recorded pair that has all these files (at least one, or it raises)."""
    found = [r for r in _all() if all(r.has(n) for n in names)]
    if not found:
        raise FileNotFoundError(f"no recording under {RECORDINGS} has {', '.join(names)}")
    return found


def recorded(*names: str) -> list[Any]:
    """pytest params, one per recorded pair that has all these files."""
    return [pytest.param(r, id=str(r)) for r in recordings(*names)]


def find(pair: str) -> Recording:
    """One pair by id, for tests that assert its concrete values."""
    return next(r for r in _all() if str(r) == pair)


Answer = Callable[[httpx.Request], httpx.Response]


def mock_client(answer: Answer, auth: Auth | None = None, user: str = "slurm") -> SlurmClient:
    """Our client, talking to `answer` instead of a slurmrestd."""
    return SlurmClient(
        "http://slurmrestd.test",
        auth or StaticToken(TOKEN),
        service_user=user,
        timeout=5,
        transport=httpx.MockTransport(answer),
    )


class FakeSlurmrestd:
    """Answers like the slurmrestd of one recording: auth headers first (the recorded
    401/500), then 404 text for versions or paths it does not serve, the recorded
    ping, jobs and jobs by id (an unknown id gets the recorded "unfound" answer).
    A submission is checked against the spec and answered from the spec's response
    schema. `answer` replaces every answer but the ping's."""

    def __init__(self, recording: Recording, answer: str | Answer | None = None):
        self.recording = recording
        self.answer = answer
        self.requests: list[httpx.Request] = []
        self.submitted: list[dict[str, Any]] = []

    def client(self, auth: Auth | None = None) -> SlurmClient:
        return mock_client(self, auth)

    @property
    def paths(self) -> list[str]:
        return [request.url.path for request in self.requests]

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        rec = self.recording
        if not {"x-slurm-user-name", "x-slurm-user-token"} <= set(request.headers):
            return rec.response("slurm-jwt-missing-headers")
        _, prefix, version, endpoint = (request.url.path.split("/", 3) + ["", "", ""])[:4]
        if prefix != "slurm" or version not in rec.served:
            return rec.response("slurm-not-found")
        if endpoint == "ping":
            return rec.response("slurm-ping")
        if isinstance(self.answer, str):
            return rec.response(self.answer)
        if self.answer:
            return self.answer(request)
        if (request.method, endpoint) == ("GET", "jobs"):
            return rec.response("slurm-jobs")
        if request.method == "GET" and endpoint.startswith("job/"):
            return self._job(int(endpoint.removeprefix("job/")))
        if (request.method, endpoint) == ("POST", "job/submit"):
            return self._submit(request)
        return rec.response("slurm-not-found")

    def _job(self, job_id: int) -> httpx.Response:
        for state in JOB_STATES:
            if self.recording.raw_job(state)["job_id"] == job_id:
                return self.recording.response(f"slurm-job-{state}")
        return self.recording.response("slurm-job-unfound")

    def _submit(self, request: httpx.Request) -> httpx.Response:
        rec = self.recording
        assert request.headers.get("content-type") == "application/json", "22.05 answers 400"
        payload = json.loads(request.content)
        check_submission(rec.release, rec.version, payload)
        self.submitted.append(payload)
        return httpx.Response(200, json=submit_answer(rec.release, rec.version))


# --- the OpenAPI specs ----------------------------------------------------------------


def _resolve(release: str, schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        name = schema["$ref"].removeprefix("#/components/schemas/")
        schema = spec(release)["components"]["schemas"][name]
    return schema


def _operation_schema(release: str, version: str, part: str) -> dict[str, Any]:
    post = spec(release)["paths"][f"/slurm/{version}/job/submit"]["post"]
    content = post["requestBody"] if part == "request" else post["responses"]["200"]
    return content["content"]["application/json"]["schema"]


@cache
def _validator(release: str, version: str, part: str) -> Draft4Validator:
    registry = Registry().with_resource(
        SPEC_URI, Resource.from_contents(spec(release), default_specification=DRAFT4)
    )
    ref = _operation_schema(release, version, part)["$ref"]
    return Draft4Validator({"$ref": SPEC_URI + ref}, registry=registry)


def undeclared(release: str, value: Any, schema: dict[str, Any], path: str = "") -> list[str]:
    """Keys the schema does not declare: the specs allow any extra property, and
    slurmrestd refuses one it does not know."""
    schema = _resolve(release, schema)
    if not isinstance(value, dict) or "properties" not in schema:
        return []
    found = []
    for key, item in value.items():
        if key not in schema["properties"]:
            found.append(path + key)
        else:
            found += undeclared(release, item, schema["properties"][key], f"{path}{key}.")
    return found


def check_submission(release: str, version: str, payload: dict[str, Any]) -> None:
    """Raises unless `payload` is a body POST /slurm/<version>/job/submit accepts."""
    _validator(release, version, "request").validate(payload)
    unknown = undeclared(release, payload, _operation_schema(release, version, "request"))
    assert not unknown, f"{release}'s {version} does not know {unknown}"


def submit_answer(release: str, version: str, job_id: int = 4242) -> dict[str, Any]:
    """A successful submission's answer, built from the spec's response schema."""
    schema = _resolve(release, _operation_schema(release, version, "response"))
    values = {"job_id": job_id, "step_id": "batch", "job_submit_user_msg": "", "meta": {}}
    body = {key: values.get(key, []) for key in schema["properties"] if key != "result"}
    _validator(release, version, "response").validate(body)
    return body

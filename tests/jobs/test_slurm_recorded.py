"""The slurmrestd client against real answers recorded from Slurm 24.05 to 25.11
(API v0.0.41 to v0.0.44), and its submissions against every release's OpenAPI spec
(22.05's v0.0.38 included). The live dev cluster covers v0.0.38 end to end."""

import copy
import json
import logging
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from jobs.slurm import (
    JobSpec,
    SlurmAuthError,
    SlurmClient,
    SlurmConnectionError,
    SlurmInvalidResponse,
    SlurmJob,
    SlurmNotFound,
    SlurmRejected,
    SlurmServerError,
    adapters,
)
from jobs.slurm.auth import StaticToken
from jobs.slurm.models import JobState, Ping
from tests.jobs.recorded import (
    RECORDINGS,
    Answer,
    FakeSlurmrestd,
    Recording,
    check_submission,
    find,
    mock_client,
    recorded,
    recordings,
    spec,
    spec_versions,
    submit_answer,
)

SPEC = JobSpec(
    name="t-recorded",
    script="#!/bin/bash\necho hello\n",
    partition="debug",
    working_directory="/scratch/alice",
    standard_output="/scratch/alice/t-recorded-%j.out",
    time_limit_minutes=30,
    environment={"PATH": "/usr/bin:/bin", "HOME": "/scratch/alice"},
)
SINCE = datetime(2025, 11, 12, 10, 0, tzinfo=UTC)


def at(epoch: int) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)


def reply(response: httpx.Response) -> Answer:
    return lambda request: response


class NoHeaders:
    def headers(self, user: str) -> dict[str, str]:
        return {}


# --- version discovery --------------------------------------------------------------


@pytest.mark.parametrize("rec", recorded("slurm-ping", "slurm-not-found"))
def test_it_picks_the_newest_api_version_slurmrestd_serves(rec: Recording) -> None:
    server = FakeSlurmrestd(rec)

    assert server.client().api_version() == rec.version

    newer = adapters.API_VERSIONS[: adapters.API_VERSIONS.index(rec.version)]
    assert server.paths == [f"/slurm/{v}/ping" for v in (*newer, rec.version)]


@pytest.mark.parametrize("rec", recorded("slurm-ping", "slurm-not-found"))
def test_it_discovers_the_api_version_once(rec: Recording) -> None:
    server = FakeSlurmrestd(rec)
    client = server.client()
    client.api_version()
    asked = len(server.requests)

    assert client.api_version() == rec.version
    assert len(server.requests) == asked


def test_a_slurmrestd_serving_no_version_it_knows_is_not_found() -> None:
    rec = find("25.11-v0.0.44")
    client = mock_client(lambda request: rec.response("slurm-not-found"))
    with pytest.raises(SlurmNotFound, match="serves none of v0.0.45, v0.0.44"):
        client.api_version()


# --- ping -----------------------------------------------------------------------------


@pytest.mark.parametrize("rec", recorded("slurm-ping"))
def test_ping_reports_the_release_host_and_cluster(rec: Recording) -> None:
    raw = rec.body("slurm-ping")

    assert FakeSlurmrestd(rec).client().ping() == Ping(
        api_version=rec.version,
        release=raw["meta"]["slurm"]["release"],
        hostname=raw["pings"][0]["hostname"],
        up=True,
        cluster=raw["meta"]["slurm"]["cluster"],  # "hpc"; ours "storagelab26"
        status=raw["pings"][0].get("status", ""),  # v0.0.45+: "No error"
    )


def test_ping_reads_the_recorded_values_of_25_11_and_24_05() -> None:
    assert FakeSlurmrestd(find("25.11-v0.0.44")).client().ping() == Ping(
        api_version="v0.0.44", release="25.11.0", hostname="admin.nova", up=True, cluster="hpc"
    )
    assert FakeSlurmrestd(find("24.05-v0.0.41")).client().ping() == Ping(
        api_version="v0.0.41", release="24.05.3", hostname="admin.emulator", up=True, cluster="hpc"
    )


@pytest.mark.parametrize("rec", recorded("slurm-ping"))
def test_a_controller_that_does_not_answer_pings_is_down(rec: Recording) -> None:
    body = copy.deepcopy(rec.body("slurm-ping"))
    body["pings"][0]["pinged"] = "DOWN"
    if "responding" in body["pings"][0]:
        body["pings"][0]["responding"] = False

    assert adapters.parse_ping(rec.version, body).up is False


@pytest.mark.parametrize("rec", recorded("slurm-ping"))
def test_the_cluster_name_comes_from_the_api(rec: Recording, settings: Any) -> None:
    settings.SLURM_CLUSTER_NAME = "from-settings"

    assert FakeSlurmrestd(rec).client().cluster_name() in ("hpc", "storagelab26")


# --- jobs -----------------------------------------------------------------------------

STATES = ("completed", "failed", "pending", "running", "timeout")


def fetch(rec: Recording, state: str) -> tuple[SlurmJob, dict[str, Any]]:
    raw = rec.raw_job(state)
    return FakeSlurmrestd(rec).client().job(raw["user_name"], raw["job_id"]), raw


@pytest.mark.parametrize("state", STATES)
@pytest.mark.parametrize("rec", recorded(*(f"slurm-job-{state}" for state in STATES)))
def test_a_job_reads_as_slurm_recorded_it(rec: Recording, state: str) -> None:
    job, raw = fetch(rec, state)

    assert job.job_id == raw["job_id"]
    assert job.state == JobState(state.upper())
    assert job.user_name == raw["user_name"] != ""
    assert job.working_directory == raw["current_working_directory"]
    assert job.cluster == raw["cluster"] in ("hpc", "storagelab26")
    for field in ("submit_time", "start_time", "end_time"):
        assert getattr(job, field) == at(raw[field]["number"])
        assert getattr(job, field).utcoffset().total_seconds() == 0


@pytest.mark.parametrize("rec", recorded("slurm-job-completed"))
def test_a_completed_job_exited_0(rec: Recording) -> None:
    job, _ = fetch(rec, "completed")

    assert (job.state, job.return_code, job.signal, job.reason) == (JobState.COMPLETED, 0, None, "")
    assert job.state.finished


@pytest.mark.parametrize("rec", recorded("slurm-job-failed"))
def test_a_failed_job_reports_its_exit_code_and_why(rec: Recording) -> None:
    job, raw = fetch(rec, "failed")

    assert job.state == JobState.FAILED
    assert job.return_code == raw["exit_code"]["return_code"]["number"] == 1
    assert job.signal is None
    assert job.reason == "NonZeroExitCode"


@pytest.mark.parametrize("rec", recorded("slurm-job-timeout"))
def test_a_timed_out_job_was_stopped_by_sigterm(rec: Recording) -> None:
    job, _ = fetch(rec, "timeout")

    assert (job.state, job.signal, job.return_code) == (JobState.TIMEOUT, 15, None)
    assert job.reason == "TimeLimit"


@pytest.mark.parametrize("rec", recorded("slurm-job-pending"))
def test_a_pending_job_is_not_finished_and_says_why(rec: Recording) -> None:
    job, raw = fetch(rec, "pending")

    assert job.state == JobState.PENDING
    assert not job.state.finished
    assert job.reason == raw["state_reason"] in ("BeginTime", "Resources")


@pytest.mark.parametrize("rec", recorded("slurm-job-running"))
def test_a_running_job_is_not_finished(rec: Recording) -> None:
    job, _ = fetch(rec, "running")

    assert (job.state, job.reason, job.state.finished) == (JobState.RUNNING, "", False)
    assert job.submit_time <= job.start_time


def test_a_failed_25_11_job_reads_with_its_recorded_values() -> None:
    job = FakeSlurmrestd(find("25.11-v0.0.44")).client().job("vhartman", 5739)

    assert job == SlurmJob(
        job_id=5739,
        name="wrap",
        state=JobState.FAILED,
        reason="NonZeroExitCode",
        return_code=1,
        signal=None,
        submit_time=datetime(2025, 11, 12, 10, 14, 19, tzinfo=UTC),
        start_time=datetime(2025, 11, 12, 10, 14, 20, tzinfo=UTC),
        end_time=datetime(2025, 11, 12, 10, 14, 22, tzinfo=UTC),
        user_name="vhartman",
        # Recorded as "slurm-%j.out"; v0.0.43+ also give the path with %j resolved.
        standard_output="/home/vhartman/slurm-5739.out",
        working_directory="/home/vhartman",
        cluster="hpc",
        nodes="cn1",
    )


def test_a_timed_out_24_05_job_reads_with_its_recorded_values() -> None:
    job = FakeSlurmrestd(find("24.05-v0.0.41")).client().job("ksoto", 649717)

    assert job == SlurmJob(
        job_id=649717,
        name="wrap",
        state=JobState.TIMEOUT,
        reason="TimeLimit",
        return_code=None,
        signal=15,
        submit_time=datetime(2025, 5, 20, 15, 21, 5, tzinfo=UTC),
        start_time=datetime(2025, 5, 20, 15, 21, 6, tzinfo=UTC),
        end_time=datetime(2025, 5, 20, 15, 22, 29, tzinfo=UTC),
        user_name="ksoto",
        standard_output="/home/ksoto/slurm-649717.out",
        working_directory="/home/ksoto",
        cluster="hpc",
        nodes="cn001",
    )


@pytest.mark.parametrize("state", STATES)
@pytest.mark.parametrize("rec", recorded(*(f"slurm-job-{state}" for state in STATES)))
def test_a_job_names_the_nodes_slurm_gave_it(rec: Recording, state: str) -> None:
    job, raw = fetch(rec, state)

    assert job.nodes == raw["nodes"]
    # A job that ran names its node(s) as a hostlist ("cn1", "cn[1,3-4]"); a pending one none.
    assert (job.nodes == "") == (state == "pending")


@pytest.mark.parametrize("version", ["v0.0.38", "v0.0.39", "v0.0.40"])
def test_the_versions_not_recorded_name_the_nodes_as_a_string_too(version: str) -> None:
    # v0.0.38 (22.05, the dev cluster) to v0.0.40: their specs give `nodes` as a string.
    release = {"v0.0.38": "22.05", "v0.0.39": "24.05", "v0.0.40": "24.05"}[version]
    schemas = spec(release)["components"]["schemas"]
    job = schemas.get(f"{version}_job_response_properties") or schemas[f"{version}_job_info"]
    assert job["properties"]["nodes"]["type"] == "string"
    raw = copy.deepcopy(find("25.11-v0.0.44").raw_job("running")) | {"nodes": "c[1-2]"}

    assert adapters.parse_job(raw).nodes == "c[1-2]"


@pytest.mark.parametrize(
    "rec",
    [
        pytest.param(r, id=str(r))
        for r in recordings("slurm-job-completed")
        if r.raw_job("completed").get("stdout_expanded")
    ],
)
def test_the_output_path_is_the_one_slurm_resolved(rec: Recording) -> None:
    # From v0.0.43 standard_output is the pattern asked for ("slurm-%j.out").
    job, raw = fetch(rec, "completed")

    assert job.standard_output == raw["stdout_expanded"]
    assert "%" not in job.standard_output


@pytest.mark.parametrize(
    "unset",
    [
        {"set": False, "infinite": False, "number": 0},
        {"set": True, "infinite": False, "number": 0},
        {"set": True, "infinite": True, "number": 0},
        0,
    ],
    ids=["unset", "zero", "infinite", "v0.0.38-zero"],
)
def test_an_unset_time_reads_as_none(unset: Any) -> None:
    raw = copy.deepcopy(find("25.11-v0.0.44").raw_job("pending"))
    raw["start_time"] = raw["end_time"] = unset

    job = adapters.parse_job(raw)

    assert (job.start_time, job.end_time) == (None, None)
    assert job.submit_time == at(raw["submit_time"]["number"])


@pytest.mark.parametrize(
    "exit_code, decoded",
    [
        (768, (3, None)),
        (15, (None, 15)),
        (0, (0, None)),
        ({"set": True, "infinite": False, "number": 768}, (3, None)),
        ({"set": False, "infinite": False, "number": 0}, (None, None)),
    ],
    ids=["v0.0.38-exit-3", "v0.0.38-sigterm", "v0.0.38-success", "v0.0.39-exit-3", "unset"],
)
def test_a_raw_wait_status_is_decoded(exit_code: Any, decoded: tuple[Any, Any]) -> None:
    raw = copy.deepcopy(find("25.11-v0.0.44").raw_job("failed"))
    raw["job_state"], raw["exit_code"] = "FAILED", exit_code

    job = adapters.parse_job(raw)

    assert (job.state, (job.return_code, job.signal)) == (JobState.FAILED, decoded)


def test_a_job_record_without_an_id_is_an_invalid_response() -> None:
    rec = find("25.11-v0.0.44")
    body = copy.deepcopy(rec.body("slurm-jobs"))
    del body["jobs"][0]["job_id"]
    server = FakeSlurmrestd(rec, answer=reply(httpx.Response(200, json=body)))

    with pytest.raises(SlurmInvalidResponse, match="unreadable job record"):
        server.client().jobs("slurm")


# --- the job list ---------------------------------------------------------------------


@pytest.mark.parametrize("rec", recorded("slurm-jobs"))
def test_every_job_of_the_list_reads(rec: Recording) -> None:
    raw = rec.body("slurm-jobs")["jobs"]

    jobs = FakeSlurmrestd(rec).client().jobs("slurm") or []

    assert len(jobs) == len(raw) > 0
    assert [job.job_id for job in jobs] == [r["job_id"] for r in raw]
    assert [job.state.value for job in jobs] == [r["job_state"][0] for r in raw]


def test_the_lists_hold_as_many_jobs_as_recorded() -> None:
    assert len(FakeSlurmrestd(find("25.11-v0.0.43")).client().jobs("slurm") or []) == 30
    assert len(FakeSlurmrestd(find("24.05-v0.0.41")).client().jobs("slurm") or []) == 14


@pytest.mark.parametrize("rec", recorded("slurm-jobs"))
def test_jobs_since_a_time_asks_for_changes_since_then(rec: Recording) -> None:
    server = FakeSlurmrestd(rec)

    jobs = server.client().jobs("slurm", since=SINCE)

    assert jobs is not None and len(jobs) == len(rec.body("slurm-jobs")["jobs"])
    assert server.requests[-1].url.params["update_time"] == str(int(SINCE.timestamp()))


@pytest.mark.parametrize("rec", recorded("slurm-jobs"))
def test_the_job_list_carries_slurms_own_time_of_its_last_change(rec: Recording) -> None:
    said = rec.body("slurm-jobs")["last_update"]["number"]

    jobs = FakeSlurmrestd(rec).client().jobs("slurm")

    assert jobs is not None and jobs.last_update == datetime.fromtimestamp(said, UTC)


def test_an_api_that_does_not_say_its_last_change_gives_its_jobs_latest_past_event() -> None:
    # v0.0.38's shape. A pending job's start and a running job's end are forecasts,
    # later than slurmctld's clock: taking them would ask for changes "in the future".
    body = {
        "jobs": [
            {"job_id": 1, "job_state": "COMPLETED", "submit_time": 100, "end_time": 130},
            {"job_id": 2, "job_state": "RUNNING", "submit_time": 120, "start_time": 125},
            {"job_id": 3, "job_state": "PENDING", "submit_time": 128, "start_time": 5000},
        ]
    }
    body["jobs"][1]["end_time"] = body["jobs"][2]["end_time"] = 9000

    assert adapters.parse_jobs(body).last_update == datetime.fromtimestamp(130, UTC)
    assert adapters.parse_jobs({"jobs": []}).last_update is None


@pytest.mark.parametrize("rec", recorded("slurm-ping"))
def test_a_304_means_nothing_changed(rec: Recording) -> None:
    server = FakeSlurmrestd(rec, answer=reply(httpx.Response(304)))

    assert server.client().jobs("slurm", since=SINCE) is None


@pytest.mark.parametrize("rec", recorded("slurm-jobs"))
def test_the_no_job_changes_warning_means_nothing_changed(
    rec: Recording, caplog: pytest.LogCaptureFixture
) -> None:
    # What v0.0.39+ answer instead of v0.0.38's 304 (slurmctld plugin, op_handler_jobs).
    unchanged = dict(rec.body("slurm-jobs"), jobs=[])
    unchanged["warnings"] = [
        {
            "description": "No job changes since update_time[1762941600]=2025-11-12T10:00:00",
            "source": "op_handler_jobs",
        }
    ]
    server = FakeSlurmrestd(rec, answer=reply(httpx.Response(200, json=unchanged)))

    with caplog.at_level(logging.WARNING, logger="jobs.slurm"):
        assert server.client().jobs("slurm", since=SINCE) is None
    assert caplog.records == []


# --- what goes wrong --------------------------------------------------------------------


def token_refusals(error_number: int) -> list[Any]:
    return [
        pytest.param(rec, name, id=f"{rec}-{name.removeprefix('slurm-jwt-')}")
        for name in ("slurm-jwt-invalid-token", "slurm-jwt-expired-token")
        for rec in recordings(name)
        if rec.body(name)["errors"][0]["error_number"] == error_number
    ]


@pytest.mark.parametrize("rec, name", token_refusals(1007))
def test_a_refused_token_is_a_lasting_authentication_error(rec: Recording, name: str) -> None:
    server = FakeSlurmrestd(rec, answer=name)

    with pytest.raises(SlurmAuthError, match="Protocol authentication error") as caught:
        server.client().jobs("slurm")
    assert caught.value.permanent
    assert caught.value.errors[0].number == 1007


@pytest.mark.parametrize("rec", recorded("slurm-ping-token-refused"))
def test_a_ping_with_a_refused_token_is_a_refused_token_not_a_controller_down(
    rec: Recording,
) -> None:
    # 26.05 answers it 200, the controller "not responding": the health page would
    # have told a site to look at slurmctld rather than at its JWT key. v0.0.45 says
    # why in the ping; v0.0.42-44 do not, and the next request, which must
    # authenticate, is refused as any other.
    def slurmrestd(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/ping"):
            return rec.response("slurm-ping-token-refused")
        return rec.response("slurm-jwt-invalid-token")

    client = mock_client(slurmrestd)

    with pytest.raises(SlurmAuthError, match="Protocol authentication error") as caught:
        client.ping()
    assert caught.value.permanent


@pytest.mark.parametrize("rec", recorded("slurm-ping-token-refused"))
def test_a_controller_that_does_not_respond_is_still_one_that_is_down(rec: Recording) -> None:
    # The same ping, from a slurmctld really away: the next request fails for that.
    def slurmrestd(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/ping"):
            return rec.response("slurm-ping-token-refused")
        raise httpx.ConnectError("slurmctld is away")

    body = rec.body("slurm-ping-token-refused")
    if body["pings"][0].get("status"):
        pytest.skip("v0.0.45 names the refusal in the ping itself")
    ping = mock_client(slurmrestd).ping()
    assert not ping.up


@pytest.mark.parametrize("status", [500, 511], ids=["500", "511"])
def test_a_refused_token_is_an_authentication_error_whatever_the_status(status: int) -> None:
    rec = find("25.11-v0.0.44")
    server = FakeSlurmrestd(
        rec, answer=lambda request: rec.response("slurm-jwt-expired-token", status)
    )

    with pytest.raises(SlurmAuthError):
        server.client().jobs("slurm")


def test_24_05s_unspecified_token_refusal_is_a_transient_server_error() -> None:
    # 24.05 refuses a bad token with error -1 "Unspecified error", as 22.05 does when
    # slurmctld is down: the client cannot tell them apart, so it says "retry later".
    (rec, name) = token_refusals(-1)[0].values
    assert (str(rec), name) == ("24.05-v0.0.41", "slurm-jwt-invalid-token")

    with pytest.raises(SlurmServerError, match="Unspecified error") as caught:
        FakeSlurmrestd(rec, answer=name).client().jobs("slurm")
    assert not caught.value.permanent


def test_every_recorded_token_refusal_is_one_of_those_two() -> None:
    refusals = token_refusals(1007) + token_refusals(-1)
    files = sum(len(recordings(n)) for n in ("slurm-jwt-invalid-token", "slurm-jwt-expired-token"))

    assert len(refusals) == files > 0


@pytest.mark.parametrize("rec", recorded("slurm-jwt-missing-headers"))
def test_a_request_without_auth_headers_is_an_authentication_error(rec: Recording) -> None:
    server = FakeSlurmrestd(rec)
    text = (rec.folder / "slurm-jwt-missing-headers.txt").read_text().strip()

    with pytest.raises(SlurmAuthError, match=text) as caught:
        server.client(auth=NoHeaders()).api_version()
    assert caught.value.permanent


@pytest.mark.parametrize("rec", recorded("slurm-jwt-invalid-headers"))
def test_unusable_auth_headers_are_an_authentication_error(rec: Recording) -> None:
    with pytest.raises(SlurmAuthError):
        FakeSlurmrestd(rec, answer="slurm-jwt-invalid-headers").client().jobs("slurm")


@pytest.mark.parametrize("status", [404, 500], ids=["404-recorded", "500-like-22.05"])
@pytest.mark.parametrize("rec", recorded("slurm-job-unfound"))
def test_an_unknown_job_is_not_found(rec: Recording, status: int) -> None:
    server = FakeSlurmrestd(rec, answer=lambda request: rec.response("slurm-job-unfound", status))

    with pytest.raises(SlurmNotFound, match="Invalid job id specified") as caught:
        server.client().job("alice", 999999)
    assert caught.value.permanent


@pytest.mark.parametrize("rec", recorded("slurm-not-found"))
def test_an_endpoint_slurmrestd_lacks_is_not_found(rec: Recording) -> None:
    with pytest.raises(SlurmNotFound, match="no such endpoint") as caught:
        FakeSlurmrestd(rec, answer="slurm-not-found").client().cancel("alice", 5739)
    assert caught.value.status == 404


@pytest.mark.parametrize(
    "response",
    [
        lambda: httpx.Response(200, text="<h1>Welcome</h1>", headers={"content-type": "text/html"}),
        lambda: httpx.Response(
            200, text='{"jobs": [', headers={"content-type": "application/json"}
        ),
        lambda: httpx.Response(200, json=[{"job_id": 1}]),
        lambda: httpx.Response(502, text="Bad Gateway", headers={"content-type": "text/plain"}),
    ],
    ids=["html", "invalid-json", "json-array", "proxy-502"],
)
def test_an_answer_that_is_not_a_json_object_is_an_invalid_response(response: Any) -> None:
    server = FakeSlurmrestd(find("25.11-v0.0.44"), answer=lambda request: response())

    with pytest.raises(SlurmInvalidResponse):
        server.client().jobs("slurm")


@pytest.mark.parametrize(
    "error", [httpx.ConnectError("refused"), httpx.ReadTimeout("too slow")], ids=repr
)
def test_an_unreachable_slurmrestd_is_a_passing_connection_error(error: Exception) -> None:
    def fail(request: httpx.Request) -> httpx.Response:
        raise error

    client = SlurmClient(
        "http://slurmrestd.test",
        StaticToken("t"),
        service_user="slurm",
        timeout=5,
        transport=httpx.MockTransport(fail),
    )
    with pytest.raises(SlurmConnectionError) as caught:
        client.ping()
    assert caught.value.permanent is False


# What 22.05 (v0.0.38) answers for an unknown partition, recorded on the dev cluster,
# and the same refusal in the shape of v0.0.41+.
BAD_PARTITION_V0038 = {
    "meta": {"plugin": {"type": "openapi/v0.0.38", "name": "Slurm OpenAPI v0.0.38"}},
    "errors": [{"error_code": 2000, "error": "Invalid partition name specified"}],
}
BAD_PARTITION_V0044 = {
    "meta": {},
    "errors": [
        {
            "description": "Batch job submission failed",
            "error_number": 2000,
            "error": "Invalid partition name specified",
            "source": "slurm_submit_batch_job()",
        }
    ],
    "warnings": [],
}


@pytest.mark.parametrize("body", [BAD_PARTITION_V0038, BAD_PARTITION_V0044], ids=["v38", "v44"])
def test_a_job_slurm_refuses_is_rejected_for_good(body: dict[str, Any]) -> None:
    server = FakeSlurmrestd(find("25.11-v0.0.44"), answer=reply(httpx.Response(500, json=body)))

    with pytest.raises(SlurmRejected, match="Invalid partition name specified") as caught:
        server.client().submit("alice", SPEC)
    assert caught.value.permanent


# What 26.05 answers a job of a user its controller does not know (a token for a name
# slurmctld cannot resolve), asked on the dev cluster.
UNKNOWN_USER_V0045 = {
    "meta": {},
    "errors": [
        {
            "description": "Batch job submission failed",
            "error_number": 6010,
            "error": "Rejecting authentication of user nobody or group nobody",
            "source": "slurm_submit_batch_job()",
        }
    ],
    "warnings": [],
}


def test_a_user_the_controller_does_not_know_is_refused_for_good() -> None:
    # Retried as a passing error, the run would wait in the queue for ever.
    server = FakeSlurmrestd(
        find("26.05-v0.0.45"), answer=reply(httpx.Response(500, json=UNKNOWN_USER_V0045))
    )

    with pytest.raises(SlurmRejected, match="Rejecting authentication of user nobody") as caught:
        server.client().submit("alice", SPEC)
    assert caught.value.permanent


@pytest.mark.parametrize("status", [200, 500])
def test_a_node_not_yet_back_after_a_slurmctld_restart_is_worth_another_try(status: int) -> None:
    # What 22.05 answered a submission seconds after slurmctld restarted (tests/faults):
    # HTTP 200 with this error, for about 4 s after the restart on the dev cluster.
    body = {"errors": [{"error_code": 2068, "error": "Required node not available"}]}
    server = FakeSlurmrestd(find("25.11-v0.0.44"), answer=reply(httpx.Response(status, json=body)))

    with pytest.raises(SlurmServerError, match="could not answer") as caught:
        server.client().submit("alice", SPEC)
    assert not caught.value.permanent


# --- submissions ------------------------------------------------------------------------

SPEC_VERSIONS = [
    pytest.param(release, version, id=f"{release}-{version}")
    for release in sorted(path.parent.name for path in RECORDINGS.glob("*/openapi-v3.json"))
    for version in spec_versions(release)
]


@pytest.mark.parametrize("release, version", SPEC_VERSIONS)
def test_the_submission_is_what_the_release_spec_accepts(release: str, version: str) -> None:
    check_submission(release, version, adapters.submit_payload(version, SPEC))


@pytest.mark.parametrize("release, version", SPEC_VERSIONS)
def test_a_run_kept_on_one_node_asks_each_release_for_one_node(release: str, version: str) -> None:
    payload = adapters.submit_payload(version, SPEC.model_copy(update={"nodes": 1}))

    check_submission(release, version, payload)
    assert payload["job"]["nodes"] == ([1, 1] if version == "v0.0.38" else "1")
    assert "nodes" not in adapters.submit_payload(version, SPEC)["job"]


@pytest.mark.parametrize("release, version", SPEC_VERSIONS)
def test_ranks_spread_over_two_nodes_ask_each_release_for_as_many_on_each(
    release: str, version: str
) -> None:
    spread = SPEC.model_copy(update={"tasks": 8, "nodes": 2, "tasks_per_node": 4})
    payload = adapters.submit_payload(version, spread)

    check_submission(release, version, payload)
    assert payload["job"]["tasks_per_node"] == 4
    assert "tasks_per_node" not in adapters.submit_payload(version, SPEC)["job"]


@pytest.mark.parametrize("release, version", SPEC_VERSIONS)
def test_a_run_after_another_asks_each_release_to_start_it_once_that_one_ended(
    release: str, version: str
) -> None:
    payload = adapters.submit_payload(version, SPEC.model_copy(update={"after": 4711}))

    check_submission(release, version, payload)
    assert payload["job"]["dependency"] == "afterany:4711"  # however the one before ends
    assert "dependency" not in adapters.submit_payload(version, SPEC)["job"]


def test_v0_0_38_takes_the_script_beside_the_job_and_an_environment_object() -> None:
    payload = adapters.submit_payload("v0.0.38", SPEC)

    assert payload["script"] == SPEC.script
    assert payload["job"]["environment"] == {"PATH": "/usr/bin:/bin", "HOME": "/scratch/alice"}
    assert payload["job"]["time_limit"] == 30
    assert payload["job"]["requeue"] is False  # a node failure never reruns a run


@pytest.mark.parametrize("release, version", [p for p in SPEC_VERSIONS if p.id != "22.05-v0.0.38"])
def test_later_versions_take_the_script_in_the_job_and_a_k_v_environment(
    release: str, version: str
) -> None:
    payload = adapters.submit_payload(version, SPEC)

    assert "script" not in payload
    assert payload["job"]["script"] == SPEC.script
    assert payload["job"]["environment"] == ["PATH=/usr/bin:/bin", "HOME=/scratch/alice"]
    assert payload["job"]["time_limit"] == {"set": True, "number": 30}
    assert payload["job"]["requeue"] is False


@pytest.mark.parametrize("release, version", SPEC_VERSIONS)
def test_the_answer_to_a_submission_gives_the_job_id(release: str, version: str) -> None:
    def slurmrestd(request: httpx.Request) -> httpx.Response:
        if not request.url.path.startswith(f"/slurm/{version}/"):
            return httpx.Response(404, text="Unable find requested URL.")
        if request.url.path.endswith("/ping"):
            return httpx.Response(200, json={"pings": [], "errors": []})
        check_submission(release, version, json.loads(request.content))
        return httpx.Response(200, json=submit_answer(release, version, job_id=4242))

    client = SlurmClient(
        "http://slurmrestd.test",
        StaticToken("t"),
        service_user="slurm",
        timeout=5,
        transport=httpx.MockTransport(slurmrestd),
    )
    assert client.submit("alice", SPEC) == 4242


@pytest.mark.parametrize("rec", recorded("slurm-ping"))
def test_it_submits_to_every_recorded_slurmrestd(rec: Recording) -> None:
    server = FakeSlurmrestd(rec)

    assert server.client().submit("alice", SPEC) == 4242
    assert server.submitted[0]["job"]["name"] == "t-recorded"
    assert server.requests[-1].headers["x-slurm-user-name"] == "alice"


def test_an_answer_without_a_job_id_is_an_invalid_response() -> None:
    answer = reply(httpx.Response(200, json={"meta": {}, "errors": [], "warnings": []}))
    server = FakeSlurmrestd(find("25.11-v0.0.44"), answer=answer)

    with pytest.raises(SlurmInvalidResponse, match="no job id"):
        server.client().submit("alice", SPEC)

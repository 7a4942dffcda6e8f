"""The slurmrestd client: one private request path, version discovery, the calls."""

import logging
import ssl
from collections.abc import Callable
from datetime import datetime
from functools import cache
from json import loads
from typing import Any

import httpx
from django.conf import settings

from jobs.slurm import adapters
from jobs.slurm.auth import Auth, StaticToken, TokenSigner
from jobs.slurm.errors import (
    SlurmAuthError,
    SlurmConnectionError,
    SlurmError,
    SlurmInvalidResponse,
    SlurmMessage,
    SlurmNotFound,
    SlurmRejected,
    SlurmServerError,
)
from jobs.slurm.models import JobList, JobSpec, Ping, SlurmJob
from portal.accounts import job_account_problem

log = logging.getLogger(__name__)

INVALID_JOB_ID = 2017
PROTOCOL_AUTHENTICATION_ERROR = 1007
# ESLURM_NODE_NOT_AVAIL, "Required node not available (down, drained or reserved)":
# what slurmctld answers a submission in the seconds after it restarts, before the
# nodes have registered again (22.05 answers it with HTTP 200). Worth another try,
# unlike Slurm's other refusals.
NODE_NOT_AVAILABLE = 2068
# The authentication plugins' errors (ESLURM_AUTH_*, slurm_errno.h): 6000-6999.
AUTH_PLUGIN_ERRORS = (6000, 7000)
# Refused authentication: 401, or 511 with error 1007 (24.11+ for a bad token).
AUTH_STATUSES = (401, 511)
# The plain-text answers to missing or unusable auth headers: up to 25.05 the first,
# with 401; Slurm 25.11.0 the second, with HTTP 500 (SchedMD bug 24052).
AUTH_REFUSALS = ("Authentication failure", "Authentication does not apply to request")
# From v0.0.39, "nothing changed since update_time" is a 200 with this warning and
# no jobs, where v0.0.38 answers 304.
NO_JOB_CHANGES = "No job changes since update_time"


def _messages(body: dict[str, Any]) -> tuple[SlurmMessage, ...]:
    found = []
    for entry in body.get("errors") or ():
        if isinstance(entry, dict):
            number = entry.get("error_number", entry.get("error_code"))
            found.append(
                SlurmMessage(
                    error=str(entry.get("error", "")),
                    description=str(entry.get("description", "")),
                    source=str(entry.get("source", "")),
                    number=number if isinstance(number, int) else None,
                )
            )
    return tuple(found)


def _is_transient(number: int | None) -> bool:
    # -1 ("Unspecified error") is what Slurm 22.05 answers both when slurmctld is
    # down and when it refuses a token; 1xxx are communication errors and 5xxx
    # socket errors. ESLURM_* (2xxx-4xxx) are Slurm's considered "no", and so are the
    # authentication plugins' 6xxx: 26.05 refuses a job of a user its controller does
    # not know with 6010, "Rejecting authentication of user nobody", which no retry
    # changes.
    if number is None or number <= 0 or number == NODE_NOT_AVAILABLE:
        return True
    if AUTH_PLUGIN_ERRORS[0] <= number < AUTH_PLUGIN_ERRORS[1]:
        return False
    return (1000 <= number < 2000 and number != PROTOCOL_AUTHENTICATION_ERROR) or number >= 5000


def _unchanged(body: dict[str, Any]) -> bool:
    return any(
        isinstance(w, dict) and str(w.get("description", "")).startswith(NO_JOB_CHANGES)
        for w in body.get("warnings") or ()
    )


def _redact(text: str, headers: dict[str, str]) -> str:
    """Whatever a server echoes, the token never reaches a message or a log."""
    token = headers.get("X-SLURM-USER-TOKEN")
    return text.replace(token, "[token]") if token else text


def _raise_for(status: int, body: dict[str, Any], what: str) -> None:
    errors = _messages(body)
    numbers = {e.number for e in errors}
    if status in AUTH_STATUSES or PROTOCOL_AUTHENTICATION_ERROR in numbers:
        raise SlurmAuthError(f"{what}: token refused", status=status, errors=errors)
    if INVALID_JOB_ID in numbers:
        raise SlurmNotFound(f"{what}: no such job", status=status, errors=errors)
    # A node not back yet is a wait whatever the status: 22.05 says it with a 200.
    waiting_for_node = NODE_NOT_AVAILABLE in numbers
    if (status < 500 and not waiting_for_node) or any(not _is_transient(n) for n in numbers):
        raise SlurmRejected(f"{what}: refused by Slurm", status=status, errors=errors)
    raise SlurmServerError(f"{what}: Slurm could not answer", status=status, errors=errors)


class SlurmClient:
    def __init__(
        self,
        base_url: str,
        auth: Auth,
        *,
        service_user: str,
        timeout: float,
        transport: httpx.BaseTransport | None = None,
        refuse_user: Callable[[str], str | None] = lambda user: None,
        verify: ssl.SSLContext | bool = True,
    ):
        self.auth = auth
        self.service_user = service_user
        # Says why a request may not act as this user (None: it may); the service
        # user is the portal's own and is not asked about.
        self.refuse_user = refuse_user
        # verify: the CAs an https slurmrestd's certificate must come from
        # (ca_bundle: the site's own; True: the public ones).
        self._http = httpx.Client(
            base_url=base_url, timeout=timeout, transport=transport, verify=verify
        )
        self._version: str | None = None

    def _request(
        self,
        method: str,
        path: str,
        user: str,
        *,
        version: str | None = None,
        json: dict[str, Any] | None = None,
        params: dict[str, Any] | None = None,
    ) -> dict[str, Any] | None:
        """Every call goes through here. Returns the JSON body, or None when
        nothing changed (304, or its v0.0.39+ equivalent)."""
        if user != self.service_user and (problem := self.refuse_user(user)):
            raise SlurmAuthError(f"not acting as {user}: {problem}")
        # A path of slurmrestd's own ("/readyz") has no API version in it.
        url = path if path.startswith("/") else f"/slurm/{version or self.api_version()}/{path}"
        what = f"{method} {url}"
        headers = self.auth.headers(user)
        try:
            response = self._http.request(method, url, headers=headers, json=json, params=params)
        except httpx.TimeoutException as e:
            raise SlurmConnectionError(f"{what}: no answer in time ({type(e).__name__})")
        except httpx.TransportError as e:
            if "CERTIFICATE_VERIFY_FAILED" in str(e):
                raise SlurmConnectionError(
                    f"{what}: slurmrestd's TLS certificate is not trusted; set "
                    "SLURMRESTD_CA_BUNDLE to the CA bundle that signed it"
                ) from None
            raise SlurmConnectionError(f"{what}: cannot reach slurmrestd ({type(e).__name__})")

        status = response.status_code
        if status == 304:
            return None
        if status == 204:  # slurmrestd's /readyz and /livez: yes, and nothing to read
            return {}
        text = _redact(response.text, headers)
        content_type = response.headers.get("content-type", "")
        if not content_type.startswith("application/json"):
            if status in AUTH_STATUSES or text.strip() in AUTH_REFUSALS:
                raise SlurmAuthError(f"{what}: {text.strip()[:200]}", status=status)
            if status == 404:
                raise SlurmNotFound(f"{what}: no such endpoint", status=404)
            raise SlurmInvalidResponse(
                f"{what}: answered HTTP {status} with {content_type or 'no type'}", status=status
            )
        try:
            body = loads(text)
        except ValueError:
            raise SlurmInvalidResponse(f"{what}: invalid JSON", status=status)
        if not isinstance(body, dict):
            raise SlurmInvalidResponse(f"{what}: JSON is not an object", status=status)
        if status >= 400 or _messages(body):
            _raise_for(status, body, what)
        if _unchanged(body):
            return None
        for warning in body.get("warnings") or ():
            log.warning("slurmrestd %s: %s", what, warning)
        return body

    def api_version(self) -> str:
        """The newest API version this slurmrestd serves, found once and cached."""
        if self._version is None:
            for version in adapters.API_VERSIONS:
                try:
                    self._request("GET", "ping", self.service_user, version=version)
                except SlurmNotFound:
                    continue
                self._version = version
                break
            else:
                raise SlurmNotFound(f"slurmrestd serves none of {', '.join(adapters.API_VERSIONS)}")
        return self._version

    def ping(self) -> Ping:
        body = self._request("GET", "ping", self.service_user) or {}
        ping = adapters.parse_ping(self.api_version(), body)
        if ping.token_refused:
            raise SlurmAuthError(f"GET ping: token refused ({ping.status})", status=200)
        if not ping.up:
            # 26.05 answers v0.0.42-44's ping with a refused token as a controller that
            # does not respond, and says nothing of the token (v0.0.45 says it in
            # `status`): a request that must authenticate tells the two apart. Only a
            # refusal is news; a controller that is down fails it otherwise.
            try:
                self._request("GET", "jobs", self.service_user, params={"update_time": 2**31 - 1})
            except SlurmAuthError:
                raise
            except SlurmError:
                pass
        return ping

    def ready(self) -> bool | None:
        """slurmrestd's own word on whether it can serve (its /readyz, Slurm 26.05 and
        later): None from a slurmrestd that has no such endpoint."""
        try:
            self._request("GET", "/readyz", self.service_user)
        except SlurmNotFound:
            return None
        except (SlurmRejected, SlurmServerError, SlurmInvalidResponse) as e:
            return None if e.status == 404 else False
        return True

    def cluster_name(self) -> str:
        """From the API where it says (v0.0.40+), else from settings, else from a
        job's record (the whole job list: the costly way, last)."""
        name = self.ping().cluster or settings.SLURM_CLUSTER_NAME
        if not name:
            jobs = self.jobs(self.service_user) or []
            name = next((job.cluster for job in jobs if job.cluster), "")
        return name

    def submit(self, user: str, spec: JobSpec) -> int:
        payload = adapters.submit_payload(self.api_version(), spec)
        body = self._request("POST", "job/submit", user, json=payload) or {}
        job_id = body.get("job_id")
        if not isinstance(job_id, int):
            raise SlurmInvalidResponse("job/submit: the answer has no job id")
        return job_id

    def job(self, user: str, job_id: int) -> SlurmJob:
        body = self._request("GET", f"job/{int(job_id)}", user) or {}
        jobs = body.get("jobs") or []
        if not jobs:
            raise SlurmNotFound(f"job {job_id}: not known to Slurm")
        return adapters.parse_job(jobs[0])

    def jobs(self, user: str, since: datetime | None = None) -> JobList | None:
        """All jobs; None when none changed at or after `since` (on Slurm's clock, to
        the second: slurmctld answers the whole list when its last change is in the
        second `since` names or later)."""
        params = {"update_time": int(since.timestamp())} if since else None
        body = self._request("GET", "jobs", user, params=params)
        if body is None:
            return None
        return adapters.parse_jobs(body)

    def cancel(self, user: str, job_id: int) -> None:
        self._request("DELETE", f"job/{int(job_id)}", user)


def ca_bundle(path: str) -> ssl.SSLContext:
    """Trust only the CAs in this PEM file (a site's own CA for slurmrestd)."""
    return ssl.create_default_context(cafile=path)


@cache
def get_client() -> SlurmClient:
    """The portal's client, configured from settings (one per process)."""
    if settings.SLURM_SERVICE_TOKEN:
        auth: Auth = StaticToken(settings.SLURM_SERVICE_TOKEN)
    else:
        auth = TokenSigner(settings.SLURM_JWT_KEY_FILE, settings.SLURM_JWT_LIFESPAN)
    return SlurmClient(
        settings.SLURMRESTD_URL,
        auth,
        service_user=settings.SLURM_SERVICE_USER,
        timeout=settings.SLURMRESTD_TIMEOUT,
        refuse_user=job_account_problem,
        verify=ca_bundle(settings.SLURMRESTD_CA_BUNDLE) if settings.SLURMRESTD_CA_BUNDLE else True,
    )


__all__ = ["SlurmClient", "SlurmError", "get_client"]

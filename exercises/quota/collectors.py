"""Runs the collectors where the filesystems are mounted (the Celery worker that takes the
collect_quotas task, or `manage.py collect_quotas`) and stores what they say.

Every tool runs as an argv list, never through a shell, with a validated cluster account
name and the target's validated filesystem argument, a timeout, a fixed PATH and the C
locale. A missing tool, a failure, a timeout or output we cannot read is recorded as an
error: the page then says "unknown", never zero.
"""

import logging
import os
import pwd
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from django.conf import settings
from django.core.exceptions import ValidationError

from exercises.models import QuotaCollector, QuotaSource, SiteProfile
from exercises.quota import ondemand, parsers
from exercises.quota.local import WalkError, directory_usage
from exercises.quota.store import record_failure, record_usage
from exercises.quota.usage import QuotaParseError, Usage
from portal.models import ClusterAccount, cluster_username_validator

log = logging.getLogger(__name__)


class CollectError(Exception):
    """The collector could not tell; the message says why, for users and operators."""


@dataclass(frozen=True)
class Tool:
    argv: Callable[[str, str], list[str]]  # (cluster user, filesystem) -> command
    parse: Callable[[str, str, str], Usage]  # (output, cluster user, filesystem) -> figures
    needs_filesystem: bool = False


def _uid(user: str) -> int:
    try:
        return pwd.getpwnam(user).pw_uid
    except KeyError:
        raise CollectError(f"there is no user {user} on {socket.gethostname()}") from None


def _beegfs8_argv(user: str, filesystem: str) -> list[str]:
    mount = [f"--mount={filesystem}"] if filesystem else []
    argv = ["beegfs", "quota", "list-usage", "--uids", str(_uid(user)), "--raw"]
    return [*argv, "--output", "ndjson", *mount]


TOOLS: dict[str, Tool] = {
    QuotaCollector.LUSTRE: Tool(
        argv=lambda user, fs: ["lfs", "quota", "-q", "-u", user, fs],
        parse=lambda out, user, fs: parsers.parse_lfs_quota(out, fs),
        needs_filesystem=True,
    ),
    QuotaCollector.BEEGFS7: Tool(
        argv=lambda user, fs: (
            ["beegfs-ctl", "--getquota", "--csv", "--uid", user] + ([f"--mount={fs}"] if fs else [])
        ),
        parse=lambda out, user, fs: parsers.parse_beegfs_ctl_csv(out, user),
    ),
    QuotaCollector.BEEGFS8: Tool(
        argv=_beegfs8_argv,
        parse=lambda out, user, fs: parsers.parse_beegfs_list_usage(out, user, _uid(user)),
    ),
    QuotaCollector.GPFS: Tool(
        argv=lambda user, fs: ["mmlsquota", "-Y", "-u", user] + ([fs] if fs else []),
        parse=lambda out, user, fs: parsers.parse_mmlsquota(out, user, fs),
    ),
    QuotaCollector.NFS: Tool(
        argv=lambda user, fs: ["quota", "-w", "-p", "-v", "-u", user],
        parse=lambda out, user, fs: parsers.parse_quota(out, fs),
    ),
}


def run_tool(argv: list[str], timeout: float) -> str:
    """The tool's standard output, or CollectError saying what went wrong. A tool that
    hangs is killed with everything it started (its own process group)."""
    name = argv[0]
    try:
        tool = subprocess.Popen(  # noqa: S603 -- an argv list of validated values, no shell
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            env={"PATH": settings.QUOTA_TOOL_PATH, "LC_ALL": "C"},
            start_new_session=True,
        )
    except FileNotFoundError:
        raise CollectError(f"{name} is not installed on {socket.gethostname()}") from None
    except OSError as e:
        raise CollectError(f"{name} could not be run: {e.strerror}") from None
    with tool:
        try:
            stdout, stderr = tool.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(tool.pid, signal.SIGKILL)
            tool.communicate()
            raise CollectError(f"{name} gave no answer within {timeout:g} s") from None
    if tool.returncode != 0:
        said = (stderr.strip() or stdout.strip()).splitlines()
        detail = f": {said[0][:200]}" if said else ""
        raise CollectError(f"{name} failed (exit status {tool.returncode}){detail}")
    return stdout


def collect_usage(source: QuotaSource, account: ClusterAccount) -> Usage:
    """What `account` uses on the source's target, as its collector says."""
    user = account.username
    try:
        cluster_username_validator(user)  # the only shape a name may have on a command line
    except ValidationError:
        raise CollectError(f"{user!r} is not a valid cluster account name") from None
    if source.collector == QuotaCollector.LOCAL:
        try:
            found = directory_usage(
                source.target.directory_for(user),
                max_entries=settings.QUOTA_LOCAL_MAX_ENTRIES,
                timeout=settings.QUOTA_COMMAND_TIMEOUT,
            )
        except WalkError as e:
            raise CollectError(str(e)) from None
        return Usage(
            bytes_used=found.bytes_used,
            bytes_hard=source.target.quota_bytes,
            files_used=found.files,
        )
    tool = TOOLS.get(source.collector)
    if tool is None:
        raise CollectError(f"{source.get_collector_display()} is not run per user")
    if tool.needs_filesystem and not source.filesystem:
        raise CollectError(f"the quota source of {source.target} names no filesystem")
    argv = tool.argv(user, source.filesystem)
    output = run_tool(argv, settings.QUOTA_COMMAND_TIMEOUT)
    try:
        return tool.parse(output, user, source.filesystem)
    except QuotaParseError as e:
        raise CollectError(f"could not read the output of {argv[0]}: {e}") from None


def collect_one(source: QuotaSource, account: ClusterAccount) -> bool:
    """Collects and stores one account's figures on one target; True if it worked."""
    try:
        usage = collect_usage(source, account)
    except CollectError as e:
        record_failure(account, source.target, source.collector, str(e))
        log.warning("quota of %s on %s unknown: %s", account, source.target.key, e)
        return False
    record_usage(account, source.target, source.collector, usage)
    return True


@dataclass
class Summary:
    collected: int = 0
    failed: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


def collect_all(
    profile: SiteProfile, accounts: list[ClusterAccount] | None = None, target_key: str = ""
) -> Summary:
    """One collection round: every account on every target that has a quota source, then
    the Open OnDemand quota files (QUOTA_ONDEMAND_FILES), if the site has any."""
    started = time.monotonic()
    summary = Summary()
    sources = QuotaSource.objects.filter(target__profile=profile).select_related("target")
    if target_key:
        sources = sources.filter(target__key=target_key)
    accounts = list(ClusterAccount.objects.all()) if accounts is None else accounts
    for source in sources:
        if source.collector == QuotaCollector.ONDEMAND:
            continue
        for account in accounts:
            if collect_one(source, account):
                summary.collected += 1
            else:
                summary.failed += 1
    files = [p for p in settings.QUOTA_ONDEMAND_FILES if p]
    result = ondemand.import_files(files, profile, accounts=accounts, target_key=target_key)
    summary.collected += result.stored
    summary.failed += result.failed
    summary.notes += result.notes
    summary.seconds = time.monotonic() - started
    return summary

"""Runs the collectors where the filesystems are mounted (the Celery worker that takes the
collect_quotas task, or `manage.py collect_quotas`) and stores what they say.

Every tool runs as an argv list, never through a shell, with a validated cluster account
name and the target's validated filesystem argument, a timeout, a fixed PATH and the C
locale. A missing tool, a failure, a timeout or output we cannot read is recorded as an
error: the page then says "unknown", never zero. So is any other error: it costs one
account on one target its figure, never the round.

Every call is bounded in wall time, whatever the kernel does: the tools and the local
walk run as children, killed with all they started at the timeout, and a child that a
hung mount keeps in the kernel past SIGKILL is left behind, never waited for. Once a
tool hangs in a round, the accounts left on its filesystem are skipped for that round:
200 accounts on a hung mount cost one timeout, not 200.
"""

import json
import logging
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from django.conf import settings
from django.core.exceptions import ValidationError

from exercises.catalogue.models import QuotaCollector, QuotaSource, SiteProfile
from exercises.quotas import local, ondemand, parsers
from exercises.quotas.store import record_failure, record_unexpected, record_usage
from exercises.quotas.usage import QuotaParseError, Usage
from portal.accounts import uid_of
from portal.children import run_bounded
from portal.models import ClusterAccount, cluster_username_validator

log = logging.getLogger(__name__)

# What a tool or the walk may say: their answers are a few lines.
OUTPUT_MAX = 1024 * 1024
# The local walk as a child: local.py run as a script (no Django, no site packages).
WALK = [sys.executable, "-I", "-S", local.__file__]
WALK_NAME = "the directory walk"
# The walk stops itself at QUOTA_COMMAND_TIMEOUT, between two directories; it is
# killed this much later, when it is stuck inside one.
WALK_GRACE_SECONDS = 1.0


class CollectError(Exception):
    """The collector could not tell; the message says why, for users and operators."""


class Hung(CollectError):
    """A tool gave no answer in time: its filesystem may hang for every account."""

    def __init__(self, message: str, tool: str):
        super().__init__(message)
        self.tool = tool


@dataclass(frozen=True)
class Tool:
    argv: Callable[[str, str], list[str]]  # (cluster user, filesystem) -> command
    parse: Callable[[str, str, str], Usage]  # (output, cluster user, filesystem) -> figures
    needs_filesystem: bool = False


def _uid(user: str) -> int:
    uid = uid_of(user)
    if uid is None:
        raise CollectError(f"there is no user {user} on {socket.gethostname()}")
    return uid


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


def _run(argv: list[str], name: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """Runs `argv` to its end within `timeout` seconds (portal/children.py), or raises
    Hung (CollectError when it cannot start)."""
    env = {"PATH": settings.QUOTA_TOOL_PATH, "LC_ALL": "C"}
    try:
        code, out, err = run_bounded(argv, seconds=timeout, output_max=OUTPUT_MAX, env=env)
    except FileNotFoundError:
        raise CollectError(f"{name} is not installed on {socket.gethostname()}") from None
    except TimeoutError as e:
        left = f"; {e}" if str(e) else ""
        raise Hung(f"{name} gave no answer within {timeout:g} s{left}", name) from None
    except OSError as e:
        raise CollectError(f"{name} could not be run: {e.strerror}") from None
    return subprocess.CompletedProcess(
        argv, code, out.decode(errors="replace"), err.decode(errors="replace")
    )


def run_tool(argv: list[str], timeout: float) -> str:
    """The tool's standard output, or CollectError (Hung) saying what went wrong."""
    done = _run(argv, argv[0], timeout)
    if done.returncode != 0:
        said = (done.stderr.strip() or done.stdout.strip()).splitlines()
        detail = f": {said[0][:200]}" if said else ""
        raise CollectError(f"{argv[0]} failed (exit status {done.returncode}){detail}")
    return done.stdout


def walk(source: QuotaSource, user: str) -> Usage:
    """The local collector: the user's directory counted by local.py, in a child."""
    timeout = settings.QUOTA_COMMAND_TIMEOUT
    directory = source.target.directory_for(user)
    argv = [*WALK, directory, str(settings.QUOTA_LOCAL_MAX_ENTRIES), f"{timeout:g}"]
    done = _run(argv, WALK_NAME, timeout + WALK_GRACE_SECONDS)
    if done.returncode == local.WALK_FAILED:
        raise CollectError(done.stderr.strip() or f"{directory} could not be counted")
    if done.returncode != 0:
        said = done.stderr.strip().splitlines()  # a traceback: its last line says what
        detail = f": {said[-1][:200]}" if said else ""
        raise CollectError(f"{WALK_NAME} failed (exit status {done.returncode}){detail}")
    found = json.loads(done.stdout)
    return Usage(
        bytes_used=found["bytes_used"],
        bytes_hard=source.target.quota_bytes,
        files_used=found["files"],
    )


def collect_usage(source: QuotaSource, account: ClusterAccount) -> Usage:
    """What `account` uses on the source's target, as its collector says."""
    user = account.username
    try:
        cluster_username_validator(user)  # the only shape a name may have on a command line
    except ValidationError:
        raise CollectError(f"{user!r} is not a valid cluster account name") from None
    if source.collector == QuotaCollector.LOCAL:
        return walk(source, user)
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


def mount_of(source: QuotaSource) -> tuple[str, str]:
    """What hangs as one: a tool's filesystem (every target `quota` reports on, for NFS),
    or a local target's directories."""
    if source.collector == QuotaCollector.LOCAL:
        return source.collector, str(source.target_id)
    return source.collector, source.filesystem


def collect_one(
    source: QuotaSource, account: ClusterAccount, hung: dict[tuple[str, str], str] | None = None
) -> bool:
    """Collects and stores one account's figures on one target; True if it worked. Any
    failure leaves this one figure unknown, with the reason. `hung` (a round's) names the
    filesystems that hung in this round: their accounts are skipped, and a hang is added."""
    mount = mount_of(source)
    if hung is not None and mount in hung:
        _unknown(source, account, f"skipped: {hung[mount]}")
        return False
    try:
        usage = collect_usage(source, account)
        record_usage(account, source.target, source.collector, usage)
        return True
    except CollectError as e:
        if isinstance(e, Hung) and hung is not None:
            hung[mount] = f"{e.tool} hung on this round for {account.username}"
        log.warning("quota of %s on %s unknown: %s", account, source.target.key, e)
        _unknown(source, account, str(e))
    except Exception as e:  # a bug or a figure the database refuses: this figure only
        record_unexpected(account, source.target, source.collector, e)
    return False


def _unknown(source: QuotaSource, account: ClusterAccount, reason: str) -> None:
    try:
        record_failure(account, source.target, source.collector, reason)
    except Exception as e:  # the database, likely: the next account may fare better
        record_unexpected(account, source.target, source.collector, e)


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
    hung: dict[tuple[str, str], str] = {}
    for source in sources:
        if source.collector == QuotaCollector.ONDEMAND:
            continue
        skipped = 0
        for account in accounts:
            skipped += mount_of(source) in hung
            if collect_one(source, account, hung):
                summary.collected += 1
            else:
                summary.failed += 1
        if skipped:
            why = hung[mount_of(source)]
            summary.notes.append(f"{why}: {skipped} account(s) on {source.target.key} skipped")
    _import_ondemand(profile, accounts, target_key, summary)
    summary.seconds = time.monotonic() - started
    return summary


def _import_ondemand(
    profile: SiteProfile, accounts: list[ClusterAccount], target_key: str, summary: Summary
) -> None:
    files = [p for p in settings.QUOTA_ONDEMAND_FILES if p]
    try:
        result = ondemand.import_files(files, profile, accounts=accounts, target_key=target_key)
    except Exception as e:  # the other collectors' figures are stored already
        log.exception("quotas: the Open OnDemand import failed")
        summary.notes.append(f"the Open OnDemand import failed ({type(e).__name__}): see the log")
        return
    summary.collected += result.stored
    summary.failed += result.failed
    summary.notes += result.notes

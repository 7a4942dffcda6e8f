"""The local collector: what a user's directory holds, counted by walking it, against the
target's default quota. For tmpfs ($TMPDIR) and the dev cluster, where no quota tool
reports. It must run as a user who can read every directory (the quota worker keeps
DAC_READ_SEARCH for it), so it walks with treewalk.py: by directory descriptors, never
through a link, into the btrfs subvolumes of the filesystem but never another mount.

The collector runs this file as a script, in a child process (`python -I -S local.py PATH
MAX_ENTRIES TIMEOUT`): a stat stuck on a hung mount then blocks the child, which the
collector can abandon, never the worker. So it imports the standard library only, and
treewalk.py beside it.
"""

import json
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

if __name__ == "__main__":
    # The child: isolated (-I), the portal's code is not on its path. Appended, so that
    # nothing there can stand in for a module of the standard library.
    sys.path.append(str(Path(__file__).resolve().parents[2]))
from exercises.quotas.treewalk import (  # noqa: E402 -- the child's path is set just above
    TopError,
    Unreadable,
    allow_deep_walks,
    blocks_once,
    walk,
)

WALK_FAILED = 2  # the exit status of a walk that says why on stderr (a WalkError)
CHECK_EVERY = 1000  # entries between two looks at the clock


class WalkError(Exception):
    """The directory could not be counted completely: no figure is better than a wrong one."""


@dataclass(frozen=True)
class DirectoryUsage:
    bytes_used: int  # allocated blocks, as quotas count them, not apparent sizes
    files: int  # entries below the directory: files, directories, links


def directory_usage(path: str, *, max_entries: int, timeout: float) -> DirectoryUsage:
    """Walks `path` without following symbolic links or leaving its filesystem (its btrfs
    subvolumes are part of it); a file with several hard links counts once."""
    deadline = time.monotonic() + timeout
    seen: set[tuple[int, int]] = set()
    used = files = 0
    try:
        for found in walk(path):
            if isinstance(found, Unreadable):
                raise WalkError(f"cannot read {path}/{found.path}: {found.why}")
            files += 1
            used += blocks_once(found.info, seen)
            if files > max_entries:
                raise WalkError(
                    f"more than {max_entries:,} files in {path}: too many to count here"
                )
            if files % CHECK_EVERY == 0 and time.monotonic() > deadline:
                raise WalkError(f"counting {path} took longer than {timeout:g} s")
    except TopError as e:
        raise WalkError(str(e)) from None
    return DirectoryUsage(bytes_used=used, files=files)


def main(argv: list[str]) -> int:
    """The figures as JSON on stdout, or the reason on stderr and WALK_FAILED."""
    path, max_entries, timeout = argv
    allow_deep_walks()
    try:
        found = directory_usage(path, max_entries=int(max_entries), timeout=float(timeout))
    except WalkError as e:
        print(e, file=sys.stderr)
        return WALK_FAILED
    print(json.dumps(asdict(found)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The local collector: what a user's directory holds, counted by walking it, against the
target's default quota. For tmpfs ($TMPDIR) and the dev cluster, where no quota tool
reports. It must run as a user who can read every directory (root on the dev cluster).

The collector runs this file as a script, in a child process (`python -I -S local.py PATH
MAX_ENTRIES TIMEOUT`): a stat stuck on a hung mount then blocks the child, which the
collector can abandon, never the worker. So it imports the standard library only.
"""

import json
import os
import stat
import sys
import time
from dataclasses import asdict, dataclass

WALK_FAILED = 2  # the exit status of a walk that says why on stderr (a WalkError)


class WalkError(Exception):
    """The directory could not be counted completely: no figure is better than a wrong one."""


@dataclass(frozen=True)
class DirectoryUsage:
    bytes_used: int  # allocated blocks, as quotas count them, not apparent sizes
    files: int  # entries below the directory: files, directories, links


def directory_usage(path: str, *, max_entries: int, timeout: float) -> DirectoryUsage:
    """Walks `path` without following symbolic links or leaving its filesystem; a file with
    several hard links counts once."""
    deadline = time.monotonic() + timeout
    try:
        top = os.lstat(path)
    except FileNotFoundError:
        raise WalkError(f"{path} does not exist") from None
    except OSError as e:
        raise WalkError(f"cannot read {path}: {e.strerror}") from None
    if not stat.S_ISDIR(top.st_mode):
        raise WalkError(f"{path} is not a directory")

    seen: set[int] = set()
    used = files = 0
    pending = [path]
    while pending:
        directory = pending.pop()
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except FileNotFoundError:
                        continue  # removed since it was listed (a job cleaning up)
                    if info.st_dev != top.st_dev:
                        continue  # a mount inside the directory is another filesystem
                    files += 1
                    if info.st_ino not in seen:
                        seen.add(info.st_ino)
                        used += info.st_blocks * 512
                    if stat.S_ISDIR(info.st_mode):
                        pending.append(entry.path)
        except FileNotFoundError:
            continue  # a subdirectory removed while we walked: it holds nothing now
        except OSError as e:
            raise WalkError(f"cannot read {directory}: {e.strerror}") from None
        if files > max_entries:
            raise WalkError(f"more than {max_entries:,} files in {path}: too many to count here")
        if time.monotonic() > deadline:
            raise WalkError(f"counting {path} took longer than {timeout:g} s")
    return DirectoryUsage(bytes_used=used, files=files)


def main(argv: list[str]) -> int:
    """The figures as JSON on stdout, or the reason on stderr and WALK_FAILED."""
    path, max_entries, timeout = argv
    try:
        found = directory_usage(path, max_entries=int(max_entries), timeout=float(timeout))
    except WalkError as e:
        print(e, file=sys.stderr)
        return WALK_FAILED
    print(json.dumps(asdict(found)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

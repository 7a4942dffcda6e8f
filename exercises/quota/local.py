"""The local collector: what a user's directory holds, counted by walking it, against the
target's default quota. For tmpfs ($TMPDIR) and the dev cluster, where no quota tool
reports. It must run as a user who can read every directory (root on the dev cluster)."""

import os
import stat
import time
from dataclasses import dataclass


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

"""The walk of one user's directory that the quota count, the storage scan and the purge
share: it stays in that directory's filesystem and follows no link, whoever runs it.

The quota count (local.py) runs it on the portal's quota worker with the capability to
read every directory (DAC_READ_SEARCH); the scan and the purge (scanner.py) run it as the
user, in a Slurm job, on the nodes' Python. So it imports the standard library only, and
the jobs carry its text ahead of scanner.py's (scans.py).

- It descends by directory descriptors: a directory is opened relative to the one it
  was listed in (openat, O_NOFOLLOW and O_DIRECTORY), then checked to be the inode the
  listing saw. A directory swapped for a symbolic link, or for another directory, between
  the listing and the descent is not entered: nobody can point the walk at another
  user's tree, however well they time it.
- It never enters another mount, but it does enter a btrfs subvolume of the filesystem it
  walks: any user may make one without privilege (each has a device number of its own),
  and data in it must count towards the quota and be reached by the purge. A directory
  whose device differs from its parent's is entered when it is on the same mount as the
  top (its mount id, /proc/self/fdinfo); without that answer it is not entered.
- It holds a descriptor open for the directory it lists and for each one above it that
  still has a subdirectory to enter (a parent is closed once its last one is entered):
  never one per directory of a wide tree, nor one per level of a chain. Past the
  process's limit a directory is reported unreadable, saying why. Its other costs are
  the caller's, who stops reading when a bound is reached.
"""

import errno
import os
import stat
from collections.abc import Iterator
from typing import NamedTuple

_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


class TopError(Exception):
    """The directory asked for cannot be walked; the message says why, for people."""


class TopMissing(TopError):
    """The directory asked for does not exist."""


class Entry(NamedTuple):
    path: str  # relative to the top, "/" between names
    name: str
    info: os.stat_result  # lstat's, read through the parent's descriptor
    parent: int  # the parent's descriptor, open until the walk goes on (purge: unlinkat)


class Unreadable(NamedTuple):
    path: str  # relative to the top ("." for the top itself)
    why: str


class _Directory:
    __slots__ = ("device", "fd", "holds", "path")

    def __init__(self, fd: int, path: str, device: int):
        self.fd, self.path, self.device = fd, path, device
        self.holds = 1  # its own listing, and one per subdirectory not yet entered


def walk(top: str, *, owner: int | None = None) -> Iterator[Entry | Unreadable]:
    """Every entry below `top` (files, directories, links, each once), depth first; an
    Unreadable for a directory that could not be listed. TopError when `top` is missing,
    not a directory (a link is not), or not `owner`'s when one is named."""
    try:
        fd = os.open(top, _DIRECTORY_FLAGS)
    except FileNotFoundError:
        raise TopMissing(f"{top} does not exist") from None
    except OSError as e:
        if e.errno in (errno.ENOTDIR, errno.ELOOP):
            raise TopError(f"{top} is not a directory") from None
        raise TopError(f"cannot read {top}: {e.strerror}") from None
    info = os.fstat(fd)
    if owner is not None and info.st_uid != owner:
        os.close(fd)
        raise TopError(f"{top} is not the user's own directory")
    mount = _mount_id(fd)
    directory: _Directory | Unreadable | None = _Directory(fd, "", info.st_dev)
    held = {directory}  # the directories whose descriptors are open, closed at the end
    pending: list[tuple[_Directory, Entry]] = []  # subdirectories listed, not entered
    try:
        while True:
            if isinstance(directory, Unreadable):
                yield directory
            elif directory is not None:
                yield from _listing(directory, mount, pending)
                _release(directory, held)
            if not pending:
                return
            parent, listed = pending.pop()
            directory = _enter(parent, listed)
            if isinstance(directory, _Directory):
                held.add(directory)
            _release(parent, held)
    finally:
        for each in held:
            os.close(each.fd)


def _listing(
    directory: _Directory, mount: int | None, pending: list[tuple["_Directory", Entry]]
) -> Iterator[Entry | Unreadable]:
    """The directory's entries on the walk's filesystem; its subdirectories to enter go
    to `pending`."""
    try:
        listing = os.scandir(directory.fd)
    except OSError as e:
        yield Unreadable(directory.path or ".", e.strerror or str(e))
        return
    with listing:
        while True:
            try:
                child = next(listing)
            except StopIteration:
                return
            except OSError as e:  # the listing broke off (an I/O error)
                yield Unreadable(directory.path or ".", e.strerror or str(e))
                return
            try:
                info = child.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue  # removed since it was listed (a job cleaning up)
            except OSError as e:
                yield Unreadable(_joined(directory.path, child.name), e.strerror or str(e))
                continue
            is_dir = stat.S_ISDIR(info.st_mode)
            if info.st_dev != directory.device and not (
                is_dir and _same_mount(directory.fd, child.name, mount)
            ):
                continue  # a mount inside the directory: another filesystem
            entry = Entry(_joined(directory.path, child.name), child.name, info, directory.fd)
            yield entry
            if is_dir:
                directory.holds += 1
                pending.append((directory, entry))


def _enter(parent: _Directory, listed: Entry) -> "_Directory | Unreadable | None":
    """The subdirectory opened through its parent, if it is still the one listed."""
    try:
        fd = os.open(listed.name, _DIRECTORY_FLAGS, dir_fd=parent.fd)
    except OSError as e:
        if e.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
            return None  # removed, or replaced by a file or a link, since the listing
        if e.errno == errno.EMFILE:
            why = "directories within each other deeper than the walk can hold open"
            return Unreadable(listed.path, why)
        return Unreadable(listed.path, e.strerror or str(e))
    info = os.fstat(fd)
    if (info.st_dev, info.st_ino) != (listed.info.st_dev, listed.info.st_ino):
        os.close(fd)
        return None  # another directory moved in under its name since the listing
    return _Directory(fd, listed.path, info.st_dev)


def _release(directory: _Directory, held: set[_Directory]) -> None:
    directory.holds -= 1
    if directory.holds == 0:
        held.discard(directory)
        os.close(directory.fd)


def _same_mount(parent: int, name: str, mount: int | None) -> bool:
    """Whether the directory `name` (whose device differs from its parent's) is on the
    walk's mount: a btrfs subvolume is, a filesystem mounted there is not."""
    if mount is None:
        return False
    try:
        fd = os.open(name, _DIRECTORY_FLAGS, dir_fd=parent)
    except OSError:
        return False
    try:
        return _mount_id(fd) == mount
    finally:
        os.close(fd)


def _mount_id(fd: int) -> int | None:
    try:
        with open(f"/proc/self/fdinfo/{fd}") as info:
            for line in info:
                if line.startswith("mnt_id:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def _joined(path: str, name: str) -> str:
    return f"{path}/{name}" if path else name


def blocks_once(info: os.stat_result, seen: set[tuple[int, int]]) -> int:
    """The bytes an entry takes on the disk (its blocks, as quotas count them, not its
    size), or 0 for a file met before under another name: a file of several hard links
    counts once, as du counts it. Only those are remembered in `seen`."""
    if not stat.S_ISDIR(info.st_mode) and info.st_nlink > 1:
        key = (info.st_dev, info.st_ino)  # inode numbers repeat in each btrfs subvolume
        if key in seen:
            return 0
        seen.add(key)
    return info.st_blocks * 512


def allow_deep_walks() -> None:
    """Lets the process hold as many descriptors as its hard limit allows (at most 65,536):
    the walk holds one per level of depth, and the usual soft limit is 1,024."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 65536 if hard == resource.RLIM_INFINITY else min(hard, 65536)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))

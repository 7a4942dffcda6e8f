"""A run's directory on btrfs, for a target that compresses (StorageTarget.stored_by):
'make DIR' makes it a subvolume of its own; 'space DIR' prints the bytes its files
hold and the bytes btrfs stored for them, as "stored S of W bytes". btrfs tells
each file's size whole however little it stored (du), but the quota group of a
subvolume counts what is on the disk, and sysfs shows it to everyone. Every call
here is one a user may make: no capability, no btrfs-progs. Run `sync -f DIR`
first: the count is brought up to date when btrfs commits."""

import fcntl
import os
import struct
import sys
import uuid

# _IOW(0x94, 14, struct btrfs_ioctl_vol_args): 4,096 bytes, a name from offset 8.
SUBVOL_CREATE = 0x5000940E
# _IOWR(0x94, 18, struct btrfs_ioctl_ino_lookup_args): tree 0 and inode 256 (a
# subvolume's root) answer with the subvolume's id, for anyone.
INO_LOOKUP = 0xD0009412
# _IOR(0x94, 31, struct btrfs_ioctl_fs_info_args): 1,024 bytes, the fsid at 16.
FS_INFO = 0x8400941F


def make(path: str) -> None:
    parent, name = os.path.split(path.rstrip("/"))
    fd = os.open(parent or ".", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        # A buffer, not bytes: ioctl copies bytes of at most 1,024.
        fcntl.ioctl(fd, SUBVOL_CREATE, bytearray(struct.pack("q4088s", 0, name.encode())))
    finally:
        os.close(fd)


def space(path: str) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        lookup = bytearray(struct.pack("QQ4080s", 0, 256, b""))
        fcntl.ioctl(fd, INO_LOOKUP, lookup)
        subvolume = struct.unpack_from("Q", lookup)[0]
        info = bytearray(1024)
        fcntl.ioctl(fd, FS_INFO, info)
        fsid = uuid.UUID(bytes=bytes(info[16:32]))
    finally:
        os.close(fd)
    counted = f"/sys/fs/btrfs/{fsid}/qgroups/0_{subvolume}/referenced"
    try:
        with open(counted) as f:
            stored = int(f.read())
    except FileNotFoundError:
        sys.exit("btrfs keeps no quota groups here (btrfs quota enable): nothing measured")
    held = 0
    for top, _dirs, files in os.walk(path):
        held += sum(os.lstat(os.path.join(top, name)).st_size for name in files)
    print(f"stored {stored} of {held} bytes")


if __name__ == "__main__":
    action, where = sys.argv[1:3]
    {"make": make, "space": space}[action](where)

#!/usr/bin/env bash
# The dev site's storage targets, made to differ for reasons a trainee can look up
# (exercises/catalogue/sites/dev.toml says the same on each target's page):
#   $HOME    /srv/storagelab/home     a small ext4 image on a loop device, mounted
#            sync,dirsync (every write and every file creation waits until it is on
#            the disk) and capped at $HOME_MIB_S MiB/s each way: a slow, safe home.
#   $GLOBAL  /srv/storagelab/global   an ext4 image on a loop device straight to the
#            disk, capped at $GLOBAL_IOPS requests and $GLOBAL_MIB_S MiB a second each
#            way: the seeks of a few spinning disks, as the parallel filesystems of the
#            course's sites had, behind one client's link.
#   $SCRATCH /srv/storagelab/scratch  an ext4 image without a journal, mounted
#            nobarrier, on a loop device over a cached file: fsync returns once
#            the data is in the VM's memory. Fast, and unsafe in a crash; capped at
#            $SCRATCH_IOPS requests and $SCRATCH_MIB_S MiB a second: more (or faster) disks.
#   $BINFS   /srv/storagelab/binfs    a small ext4 image with many inodes, on a loop
#            device straight to the disk, capped at $BINFS_IOPS requests and
#            $BINFS_MIB_S MiB a second: SSDs without redundancy, for many small files
#            and small random I/O (VSC-3's $BINFS).
#   $PROJECT /srv/storagelab/project  a btrfs image that compresses every write with
#            zstd (compress-force), on a loop device straight to the disk, capped at
#            $PROJECT_MIB_S MiB a second each way: a project space that compresses, as
#            ZFS with lz4 often is. Quota groups on: each run writes in a subvolume of
#            its own, whose quota group counts what was stored (sysfs shows it to all).
#   $TMPDIR  a tmpfs of its own per account, size-limited (account.sh mounts it).
# Idempotent: does nothing when all is in place; after a reboot it attaches and
# mounts the images again. What this machine cannot do (no loop devices, no blkio
# throttle) it skips with one line saying so: the target is then a plain directory.
# Content found in a directory about to be mounted over is copied onto the new
# filesystem first (a running cluster switched over keeps its accounts' files).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"

[ "$(id -u)" = 0 ] || die "run as root: it attaches loop devices and mounts filesystems"

DISK_ROOT=${STORAGELAB_DISK_ROOT:-/srv/storagelab}
IMAGE_DIR=${STORAGELAB_IMAGE_DIR:-$STATE_DIR/storage}
HOME_SIZE=${STORAGELAB_HOME_SIZE:-4G}
SCRATCH_SIZE=${STORAGELAB_SCRATCH_SIZE:-8G}
GLOBAL_SIZE=${STORAGELAB_GLOBAL_SIZE:-16G}
BINFS_SIZE=${STORAGELAB_BINFS_SIZE:-2G}
PROJECT_SIZE=${STORAGELAB_PROJECT_SIZE:-2G}
HOME_MIB_S=${STORAGELAB_HOME_MIB_S:-20}
GLOBAL_IOPS=${STORAGELAB_GLOBAL_IOPS:-400}
GLOBAL_MIB_S=${STORAGELAB_GLOBAL_MIB_S:-200}
SCRATCH_IOPS=${STORAGELAB_SCRATCH_IOPS:-2000}
SCRATCH_MIB_S=${STORAGELAB_SCRATCH_MIB_S:-1000}
BINFS_IOPS=${STORAGELAB_BINFS_IOPS:-20000}
BINFS_MIB_S=${STORAGELAB_BINFS_MIB_S:-400}
PROJECT_MIB_S=${STORAGELAB_PROJECT_MIB_S:-100}
GLOBAL_OPTIONS=noatime
HOME_OPTIONS=sync,dirsync
SCRATCH_OPTIONS=noatime,nobarrier
BINFS_OPTIONS=noatime
# Every write compressed (compress alone gives up on a file whose start did not
# compress); a user may remove the subvolumes their runs make.
PROJECT_OPTIONS=noatime,compress-force=zstd:3,user_subvol_rm_allowed
BLKIO=/sys/fs/cgroup/blkio

apt_install e2fsprogs btrfs-progs mount util-linux
mkdir -p "$DISK_ROOT" "$IMAGE_DIR"
chmod 0755 "$DISK_ROOT"

# image_mount NAME SIZE LOOP_DIRECT_IO MOUNT_OPTIONS FSTYPE MKFS_OPTION...: the image
# $IMAGE_DIR/NAME.img (ext4 or btrfs) mounted on $DISK_ROOT/NAME through a loop device.
# Sets LOOP to the loop device, or to nothing when the machine cannot (NAME stays a
# plain directory).
image_mount() {
  local name=$1 size=$2 direct_io=$3 options=$4 fstype=$5 image loop target staging
  LOOP=
  shift 5
  image=$IMAGE_DIR/$name.img
  target=$DISK_ROOT/$name
  mkdir -p "$target" && chmod 0755 "$target"
  loop=$(losetup -j "$image" -O NAME -n 2>/dev/null | head -n 1)
  if [ -n "$loop" ] && [ "$(findmnt -no SOURCE --mountpoint "$target" 2>/dev/null)" = "$loop" ]; then
    # In place; the options are made right (a remount keeps open files).
    if [ -n "$(comm -23 <(tr ',' '\n' <<<"$options" | sort) \
      <(findmnt -no OPTIONS --mountpoint "$target" | tr ',' '\n' | sort))" ]; then
      mount -o "remount,$options" "$target"
      say "remounted $target with $options"
    fi
    LOOP=$loop
    return 0
  fi
  [ -e /dev/loop-control ] || modprobe loop 2>/dev/null || true
  [ "$fstype" != btrfs ] || grep -qw btrfs /proc/filesystems || modprobe btrfs 2>/dev/null || true
  if ! grep -qw "$fstype" /proc/filesystems || [ ! -e /dev/loop-control ]; then
    say "$name: no loop devices or no $fstype in this kernel, so $target stays a plain directory on the disk"
    return 0
  fi
  if [ ! -e "$image" ]; then
    truncate -s "$size" "$image"
    if [ "$fstype" = btrfs ]; then
      mkfs.btrfs -q -f -L "sl-$name" "$@" "$image" >/dev/null
    else
      mkfs.ext4 -q -F -L "sl-$name" -m 0 "$@" "$image"
    fi
    say "made the $size $fstype image $image"
  fi
  if [ -z "$loop" ]; then
    if ! loop=$(losetup --find --show --direct-io="$direct_io" "$image" 2>/dev/null); then
      say "$name: cannot attach a loop device here, so $target stays a plain directory on the disk"
      return 0
    fi
  fi
  # A machine that went down with it mounted: scratch has no journal to replay (btrfs
  # is consistent at every commit: nothing to check).
  if [ "$fstype" = ext4 ]; then
    e2fsck -p "$loop" >/dev/null 2>&1 || [ $? -le 1 ] || die "e2fsck $image failed: run e2fsck -f $loop by hand"
  fi
  if [ -n "$(ls -A "$target")" ]; then
    staging=$(mktemp -d "$IMAGE_DIR/.staging.XXXXXX")
    mount "$loop" "$staging"
    cp -a "$target/." "$staging/"
    umount "$staging"
    mount -o "$options" "$loop" "$target"
    # The originals, now hidden under the mount: seen through a plain bind mount of
    # the parent (a bind does not carry the mounts below it), then removed.
    mount --bind "$DISK_ROOT" "$staging"
    find "$staging/$name" -mindepth 1 -delete
    umount "$staging" && rmdir "$staging"
    say "moved what was in $target onto its new filesystem"
  else
    mount -o "$options" "$loop" "$target"
  fi
  rm -rf "$target/lost+found"
  chmod 0755 "$target"
  say "mounted $image on $target ($options, via $loop)"
  LOOP=$loop
}

# $HOME: the loop device writes straight to the disk (direct I/O, no second cache),
# so sync waits for the disk and the throttle below sees every request.
image_mount home "$HOME_SIZE" on "$HOME_OPTIONS" ext4
home_loop=$LOOP
# $GLOBAL: straight to the disk as well, with nothing but its caps (below) between.
image_mount global "$GLOBAL_SIZE" on "$GLOBAL_OPTIONS" ext4
global_loop=$LOOP
# $SCRATCH: no journal; nobarrier sends no cache flush, and the loop device's buffered
# writes complete once in the page cache of its image file.
image_mount scratch "$SCRATCH_SIZE" off "$SCRATCH_OPTIONS" ext4 -O ^has_journal
scratch_loop=$LOOP
# $BINFS: straight to the disk (an SSD's writes are on it when they complete), an inode
# for every 4 KiB of it (many small files), and caps far above $GLOBAL's in requests.
image_mount binfs "$BINFS_SIZE" on "$BINFS_OPTIONS" ext4 -i 4096
binfs_loop=$LOOP
# $PROJECT: straight to the disk as $GLOBAL, compressing every write; quota groups
# count what each run's subvolume stored (enabling them again changes nothing).
image_mount project "$PROJECT_SIZE" on "$PROJECT_OPTIONS" btrfs
project_loop=$LOOP
[ -z "$project_loop" ] || btrfs quota enable "$DISK_ROOT/project"

# cap LOOP WHAT VALUE LABEL: a throttle on LOOP's reads and writes (WHAT: bps or iops),
# for every process of this host and for the kernel's writeback too: in the root of
# the cgroup v1 blkio hierarchy (cgroup v2 has no io.max at its root, and a job's own
# cgroup would not be charged for its buffered writes in v1). The root's throttle
# does not reach the processes of a container, which have blkio groups of their own
# (a node's job wrote 213 MiB/s to a $HOME capped at 20): each cap is also written
# to $CAPS, from which docker/cluster/start.sh gives every node the same.
CAPS=$IMAGE_DIR/caps
: >"$CAPS.new"
cap() {
  local loop=$1 what=$2 value=$3 label=$4 device direction file
  [ -n "$loop" ] || return 0
  if [ ! -w "$BLKIO/blkio.throttle.write_${what}_device" ]; then
    say "no cgroup v1 blkio throttle on this machine, so $label is not capped"
    return 0
  fi
  echo "$loop $what $value" >>"$CAPS.new"
  device=$(lsblk -dno MAJ:MIN "$loop" | tr -d ' ')
  for direction in write read; do
    file=$BLKIO/blkio.throttle.${direction}_${what}_device
    grep -qx "$device $value" "$file" || {
      echo "$device $value" >"$file"
      say "capped $loop at $label ${direction}s"
    }
  done
}
cap "$home_loop" bps $((HOME_MIB_S * 1048576)) "$HOME_MIB_S MiB/s ($DISK_ROOT/home)"
cap "$global_loop" iops "$GLOBAL_IOPS" "$GLOBAL_IOPS requests/s ($DISK_ROOT/global)"
cap "$scratch_loop" iops "$SCRATCH_IOPS" "$SCRATCH_IOPS requests/s ($DISK_ROOT/scratch)"
cap "$binfs_loop" iops "$BINFS_IOPS" "$BINFS_IOPS requests/s ($DISK_ROOT/binfs)"
# And in bytes: whether a 1 MiB request reaches a loop device as one request or two
# depends on how the kernel found the buffer's pages, so a cap in requests alone let
# streaming flip between two speeds from run to run. One client's link, in effect.
cap "$global_loop" bps $((GLOBAL_MIB_S * 1048576)) "$GLOBAL_MIB_S MiB/s ($DISK_ROOT/global)"
cap "$scratch_loop" bps $((SCRATCH_MIB_S * 1048576)) "$SCRATCH_MIB_S MiB/s ($DISK_ROOT/scratch)"
cap "$binfs_loop" bps $((BINFS_MIB_S * 1048576)) "$BINFS_MIB_S MiB/s ($DISK_ROOT/binfs)"
cap "$project_loop" bps $((PROJECT_MIB_S * 1048576)) "$PROJECT_MIB_S MiB/s ($DISK_ROOT/project)"
mv "$CAPS.new" "$CAPS"

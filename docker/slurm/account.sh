#!/usr/bin/env bash
# account.sh add|remove NAME: a cluster account of the dev site, a real Unix user
# with its own directory on each dev storage target:
#   $STORAGELAB_DISK_ROOT/{home,global,scratch}/NAME  (disk: the $HOME/$GLOBAL/$SCRATCH-like targets)
#   $STORAGELAB_TMPFS_ROOT/NAME                         (tmpfs: the $TMPDIR-like target)
# home and scratch are the filesystems docker/slurm/storage.sh mounts. The tmpfs
# directory is a tmpfs of its own, $STORAGELAB_TMPDIR_SIZE big (2g, the dev site's
# quota for $TMPDIR), so that a run that does not fit fails with "No space left on
# device" in its own account, and never fills the machine's memory for everyone.
# Tests use it too, each with names of its own.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"

DISK_ROOT=${STORAGELAB_DISK_ROOT:-/srv/storagelab}
TMPFS_ROOT=${STORAGELAB_TMPFS_ROOT:-/dev/shm/storagelab}
TMPDIR_SIZE=${STORAGELAB_TMPDIR_SIZE:-2g}
action=${1:-}
name=${2:-}
# The same rule as the portal's ClusterAccount.username.
[[ "$name" =~ ^[a-z_][a-z0-9_-]{0,31}$ ]] || die "not a valid account name: '$name'"

dirs=("$DISK_ROOT/home/$name" "$DISK_ROOT/global/$name" "$DISK_ROOT/scratch/$name" "$TMPFS_ROOT/$name")
case "$action" in
add)
  id "$name" >/dev/null 2>&1 ||
    useradd --create-home --home-dir "$DISK_ROOT/home/$name" --shell /bin/bash "$name"
  for dir in "${dirs[@]}"; do
    mkdir -p "$(dirname "$dir")" && chmod 0755 "$(dirname "$dir")"
    mkdir -p "$dir"
    chown "$name:" "$dir"
    chmod 0700 "$dir"
  done
  tmpdir=$TMPFS_ROOT/$name
  if ! mountpoint -q "$tmpdir"; then
    mount -t tmpfs -o "size=$TMPDIR_SIZE,mode=0700,uid=$(id -u "$name"),gid=$(id -g "$name")" \
      "storagelab-tmp-$name" "$tmpdir" ||
      say "$tmpdir: cannot mount a tmpfs here, so it stays a directory of /dev/shm with no size limit of its own"
  fi
  ;;
remove)
  # Its jobs first: a job of a deleted user would wait in the queue for ever.
  scancel --user="$name" 2>/dev/null || true
  pkill -u "$name" 2>/dev/null || true
  id "$name" >/dev/null 2>&1 && userdel "$name"
  mountpoint -q "$TMPFS_ROOT/$name" && umount --lazy "$TMPFS_ROOT/$name"
  rm -rf "${dirs[@]}"
  ;;
*) die "usage: account.sh add|remove NAME" ;;
esac

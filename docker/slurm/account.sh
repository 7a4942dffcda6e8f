#!/usr/bin/env bash
# account.sh add|remove NAME: a cluster account of the dev site, a real Unix user
# with its own directory on each dev storage target:
#   $STORAGELAB_DISK_ROOT/{home,global,scratch,binfs,project}/NAME  (disk: $HOME/$GLOBAL/$SCRATCH/$BINFS/$PROJECT)
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

dirs=("$DISK_ROOT/home/$name" "$DISK_ROOT/global/$name" "$DISK_ROOT/scratch/$name" "$DISK_ROOT/binfs/$name"
  "$DISK_ROOT/project/$name" "$TMPFS_ROOT/$name")

# root_dir DIR: DIR is a directory of root's, no link, that only root writes to, made if
# missing. Root chowns and mounts in it: a link or a directory another user made there
# (/dev/shm is everyone's) would take that elsewhere. Checked after the mkdir, which
# leaves what was there: once root's, nobody else can swap it.
root_dir() {
  local dir=$1
  [ -d "$(dirname "$dir")" ] || mkdir -p "$(dirname "$dir")"
  mkdir -m 0755 "$dir" 2>/dev/null || true
  if [ -L "$dir" ] || [ ! -d "$dir" ] || [ "$(stat -c %u "$dir")" != 0 ] ||
    [ -n "$(find "$dir" -maxdepth 0 -perm /022)" ]; then
    die "$dir is not a directory only root writes to (a link, or another user's): nothing was done; remove it, then add the account again"
  fi
}

case "$action" in
add)
  for dir in "${dirs[@]}"; do
    root_dir "$(dirname "$dir")"
    # In a directory only root writes to: what is there, root put there. Never a link.
    [ ! -L "$dir" ] || die "$dir is a link: nothing was done"
  done
  id "$name" >/dev/null 2>&1 ||
    useradd --create-home --home-dir "$DISK_ROOT/home/$name" --shell /bin/bash "$name"
  for dir in "${dirs[@]}"; do
    mkdir -p "$dir"
    chown -h "$name:" "$dir"
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
  # Its jobs first, on the cluster (docker/cluster/): a job of a deleted user would wait
  # in the queue for ever (on the second cluster of CLUSTER_PREFIX when one is named).
  timeout 30 /usr/bin/docker exec "${CLUSTER_PREFIX:-}slurm-ctl" scancel --user="$name" >/dev/null 2>&1 || true
  pkill -u "$name" 2>/dev/null || true
  id "$name" >/dev/null 2>&1 && userdel "$name"
  mountpoint -q "$TMPFS_ROOT/$name" && umount --lazy "$TMPFS_ROOT/$name"
  rm -rf "${dirs[@]}"
  ;;
*) die "usage: account.sh add|remove NAME" ;;
esac

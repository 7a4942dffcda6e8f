#!/usr/bin/env bash
# docker/cluster/account.sh [--remove] NAME...: the host's accounts NAME on every node of the
# cluster, with the same UID and GID (jobs run as the user, and files a node writes on
# a shared filesystem must be theirs everywhere), and their own directory on the
# networked target, /gluster/NAME and /gluster-wide/NAME (its striped layout; mode 700). The accounts must exist on the host
# (docker/slurm/account.sh makes the dev site's). One script per container for all the
# names: a class of a thousand takes seconds. --remove takes NAME's account and
# directory off the nodes again (a bench's thousand accounts otherwise stay in every
# node's /etc/passwd and slow each account made after them). CLUSTER_PREFIX=h7- makes
# them on the second cluster of that prefix (docker/cluster/start.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
DOCKER=${DOCKER:-/usr/bin/docker}
# Slurm's containers (the file servers have no users: glusterd keeps the files' owners).
prefix=${CLUSTER_PREFIX:-}
containers=$("$DOCKER" ps --format '{{.Names}}' --filter "label=$(cluster_label)" --filter "name=${prefix}slurm-")
[ -n "$containers" ] || die "the cluster does not run: docker/cluster/start.sh"
remove=""
[ "${1:-}" != --remove ] || { remove=1; shift; }
accounts="" directories=""
for name in "$@"; do
  if [ -n "$remove" ]; then
    # Names as useradd makes them, checked: they become words of the script below.
    [[ $name =~ ^[a-z_][a-z0-9_-]*$ ]] || die "not an account name: $name"
    accounts+="! getent passwd '$name' >/dev/null || userdel '$name'
"
    directories+="rm -rf '/gluster/$name' '/gluster-wide/$name'
"
    continue
  fi
  entry=$(getent passwd "$name") || die "no account $name on this host"
  IFS=: read -r _ _ uid gid _ home _ <<<"$entry"
  group=$(getent group "$gid" | cut -d: -f1)
  # The host's names are plain (useradd's rules): safe as words of the script below.
  # A name the host gave up may have left its UID to someone else here: theirs goes.
  accounts+="old=\$(getent passwd $uid | cut -d: -f1)
[ -z \"\$old\" ] || [ \"\$old\" = '$name' ] || userdel \"\$old\"
getent group $gid >/dev/null || groupadd -g $gid '$group'
getent passwd '$name' >/dev/null || useradd -u $uid -g $gid -d '$home' -M -s /bin/sh '$name'
"
  # Every node mounts the same volume: one of them makes the directories.
  directories+="install -d -m 0700 -o $uid -g $gid '/gluster/$name' '/gluster-wide/$name'
"
done
for c in $containers; do
  printf 'set -e\n%s' "$accounts" | "$DOCKER" exec -i "$c" sh -s
done
printf 'set -e\n%s' "$directories" | "$DOCKER" exec -i "${prefix}slurm-n1" sh -s

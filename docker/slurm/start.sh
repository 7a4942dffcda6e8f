#!/usr/bin/env bash
# Brings up the dev site's cluster: its storage targets on this host
# (docker/slurm/storage.sh), its accounts (docker/slurm/account.sh), and the Slurm
# cluster that runs their jobs: Slurm 26.05 in containers, a controller (slurmctld, and
# slurmrestd with JWT on 127.0.0.1:6821) and two compute nodes that mount those targets,
# plus a GlusterFS volume over two file servers (docker/cluster/start.sh;
# CLUSTER_SLURM=24.11 for Debian 13's Slurm). Idempotent: installs only what is
# missing and reuses a cluster that runs. docker/slurm/stop.sh stops it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"

[ "$(id -u)" = 0 ] || die "run as root: it installs packages, mounts filesystems and runs Docker"

# fio on the host too: the portal's tests parse what it prints here. curl: the
# portal's own checks of the cluster's slurmrestd.
apt_install fio curl
# darshan-runtime (without MPI) and darshan-util, from the vendored source (built once,
# about a minute): the nodes mount the runtime, and each lab run records its own I/O
# with it (RUN_DARSHAN_RUNTIME); the portal reads the logs with darshan-util.
"$here/../darshan/build.sh"

# The dev site's storage targets (loop-mounted images, a throttle): mounted before the
# accounts' directories are made on them.
"$here/storage.sh"
# The dev site's cluster accounts: an instructor, three trainees, and the account the
# weather's canaries run as.
for user in ${STORAGELAB_DEV_ACCOUNTS:-sl-instructor sl-trainee1 sl-trainee2 sl-trainee3 sl-weather}; do
  "$here/account.sh" add "$user"
done
# The cluster (Docker first), and the same accounts on its nodes.
"$here/../dev/docker.sh"
"$here/../cluster/start.sh"
# shellcheck disable=SC2086
"$here/../cluster/account.sh" ${STORAGELAB_DEV_ACCOUNTS:-sl-instructor sl-trainee1 sl-trainee2 sl-trainee3 sl-weather}

#!/bin/bash
# storagelab-cluster ROLE: the role's daemons in the foreground (munge first for Slurm's).
#   controller  slurmctld, and slurmrestd (JWT, as its own user) on :6820, restarted
#               when it ends; the container ends with slurmctld
#   node        slurmd, named after the container's host name, once the networked
#               target (GlusterFS volume $GLUSTER_VOLUME) is mounted at /gluster,
#               and its striped layout ($GLUSTER_WIDE_VOLUME) at /gluster-wide
#   files       glusterd: a file server of that volume (start.sh makes the volume)
# The configuration and keys are mounted by docker/cluster/start.sh: /etc/slurm and
# /etc/munge/munge.key (read-only). start.sh runs every container with Docker's init
# (tini) as PID 1, which reaps what ends orphaned (each job's slurmstepd), and passes
# `docker stop`'s TERM on to this script, or to the daemon it became.
set -euo pipefail
role=${1:?controller, node or files}
# A file server runs no Slurm, only glusterd.
[ "$role" != files ] || exec glusterd -N --log-file=-
mkdir -p /run/munge /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
chown munge:munge /run/munge
chown slurm:slurm /var/spool/slurmctld /var/log/slurm
runuser -u munge -- munged --force
case "$role" in
controller)
  slurmctld -D &
  ctld=$!
  # slurmrestd in a container: no new namespaces of its own (they need privileges),
  # and no slurmdbd (its openapi/slurmdbd plugin is fatal without one).
  until scontrol ping >/dev/null 2>&1; do sleep 0.2; done
  # slurmrestd is started again whenever it ends, as a site's service manager would,
  # but not while /run/slurmrestd.held exists: the tests' outage of slurmrestd alone
  # (never left over from before a restart).
  rm -f /run/slurmrestd.held
  (
    while :; do
      [ -e /run/slurmrestd.held ] ||
        SLURM_JWT=daemon SLURMRESTD_SECURITY=disable_unshare_sysv,disable_unshare_files \
          runuser -u slurmrestd -- slurmrestd -a rest_auth/jwt -s openapi/slurmctld 0.0.0.0:6820 ||
        true
      sleep 0.5
    done
  ) &
  # `docker stop` and `docker restart` TERM this shell (the init passes it on); were it
  # to end at once, the container would end with it and slurmctld be killed unsaved.
  # So slurmctld gets the TERM, saves its state and ends, and the container with it.
  trap 'kill -TERM "$ctld" 2>/dev/null' TERM INT
  while kill -0 "$ctld" 2>/dev/null; do wait "$ctld" || true; done
  ;;
node)
  # FUSE's mount prints its failure but exits 0: the mount point says whether it held.
  mount_volume() {
    mkdir -p "$2"
    for _ in $(seq 50); do
      mountpoint -q "$2" && return
      mount -t glusterfs "$1" "$2" 2>/dev/null || true
      sleep 0.2
    done
    mountpoint -q "$2" || { echo "could not mount $1 at $2" >&2; exit 1; }
  }
  mount_volume "${GLUSTER_VOLUME:?}" /gluster
  mount_volume "${GLUSTER_WIDE_VOLUME:?}" /gluster-wide
  # Where each job's $TMPDIR is made (prolog.sh): root's, which users may go through but
  # not write to, so no one can name a job's directory before its job (in /tmp, anyone
  # could). Made afresh: whatever was there is not ours.
  rm -rf /tmp/slurm-jobs
  install -d -o root -g root -m 0711 /tmp/slurm-jobs
  exec slurmd -D -N "$(hostname -s)"
  ;;
*)
  echo "unknown role $role" >&2
  exit 64
  ;;
esac

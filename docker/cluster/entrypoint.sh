#!/bin/bash
# storagelab-cluster ROLE: starts munge, then the role's daemons in the foreground.
#   controller  slurmctld, and slurmrestd (JWT, as its own user) on :6820
#   node        slurmd, named after the container's host name
# The configuration and keys are mounted by docker/cluster/start.sh: /etc/slurm and
# /etc/munge/munge.key (read-only).
set -euo pipefail
role=${1:?controller or node}
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
  SLURM_JWT=daemon SLURMRESTD_SECURITY=disable_unshare_sysv,disable_unshare_files \
    runuser -u slurmrestd -- slurmrestd -a rest_auth/jwt -s openapi/slurmctld 0.0.0.0:6820 &
  wait -n "$ctld" $!
  ;;
node)
  exec slurmd -D -N "$(hostname -s)"
  ;;
*)
  echo "unknown role $role" >&2
  exit 64
  ;;
esac

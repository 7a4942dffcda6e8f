#!/bin/sh
# The job's own $TMPDIR on this node: made before the job, the job user's alone, in a
# directory only root writes to (the node's start made it, entrypoint.sh): no user can
# plant a directory or a link of that name beforehand, as anyone could in /tmp, where a
# planted /tmp/job_ID would fail this prolog (and drain the node) or hand the job a
# directory of someone else's.
set -e
base=/tmp/slurm-jobs
if [ -L "$base" ] || [ ! -d "$base" ] || [ "$(stat -c %u:%a "$base")" != 0:711 ]; then
  rm -rf "$base"
  install -d -o root -g root -m 0711 "$base"
fi
dir=$base/job_$SLURM_JOB_ID
# One of an earlier job of the same id (a controller started afresh) is not this job's.
rm -rf -- "$dir"
mkdir -m 0700 "$dir"
chown "$SLURM_JOB_UID:$SLURM_JOB_GID" "$dir"

#!/bin/sh
# The job's own $TMPDIR on this node: made before the job, the job user's alone.
set -e
dir=/tmp/job_$SLURM_JOB_ID
mkdir -m 0700 "$dir"
chown "$SLURM_JOB_UID:$SLURM_JOB_GID" "$dir"

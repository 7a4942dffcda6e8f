#!/bin/sh
# Every task of the job sees its node's $TMPDIR (prolog.sh made it).
echo "export TMPDIR=/tmp/slurm-jobs/job_$SLURM_JOB_ID"

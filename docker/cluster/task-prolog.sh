#!/bin/sh
# Every task of the job sees its node's $TMPDIR.
echo "export TMPDIR=/tmp/job_$SLURM_JOB_ID"

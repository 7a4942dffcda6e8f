#!/bin/sh
# The job's $TMPDIR goes with the job ("data gets deleted after the job").
rm -rf -- "/tmp/slurm-jobs/job_$SLURM_JOB_ID"

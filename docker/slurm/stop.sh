#!/usr/bin/env bash
# Stops what docker/slurm/start.sh started, by the pids it recorded. Running jobs
# are cancelled first: stopping slurmd alone would leave them running.
# --daemons-only keeps munge (used when only the Slurm configuration changed).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"

if alive "$RUN_DIR/slurmctld.pid"; then
  squeue -h -o %i 2>/dev/null | xargs -r scancel 2>/dev/null || true
fi
stop_pidfile slurmrestd "$RUN_DIR/slurmrestd.pid"
stop_pidfile slurmd "$RUN_DIR/slurmd.pid"
stop_pidfile slurmctld "$RUN_DIR/slurmctld.pid"
if [ "${1:-}" != --daemons-only ]; then
  stop_pidfile munged "$RUN_DIR/munged.pid"
  rm -f /run/munge/munged.pid
fi

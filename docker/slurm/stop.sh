#!/usr/bin/env bash
# Stops the dev site's cluster (what docker/slurm/start.sh started): its containers,
# their jobs with them. The targets and the accounts stay. A single-node Slurm of this
# host, which earlier versions ran, is stopped too, by the pids they recorded.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"

for daemon in slurmrestd slurmd slurmctld munged; do
  stop_pidfile "$daemon" "$RUN_DIR/$daemon.pid"
done
if /usr/bin/docker info >/dev/null 2>&1; then
  "$here/../cluster/stop.sh"
fi

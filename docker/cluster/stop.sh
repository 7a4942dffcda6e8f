#!/usr/bin/env bash
# docker/cluster/stop.sh: stops and removes the cluster's containers (start.sh runs
# them afresh); its images, keys and network stay.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
DOCKER=${DOCKER:-/usr/bin/docker}
ids=$("$DOCKER" ps -aq --filter label=storagelab.cluster=1)
[ -z "$ids" ] || "$DOCKER" rm -f $ids >/dev/null
say "cluster stopped"

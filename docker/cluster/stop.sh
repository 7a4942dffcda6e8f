#!/usr/bin/env bash
# docker/cluster/stop.sh: stops and removes the cluster's containers (start.sh runs
# them afresh); its images, keys and network stay. CLUSTER_PREFIX=h7- stops the second
# cluster of that prefix, and only it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
DOCKER=${DOCKER:-/usr/bin/docker}
ids=$("$DOCKER" ps -aq --filter "label=$(cluster_label)")
[ -z "$ids" ] || "$DOCKER" rm -f $ids >/dev/null
say "cluster stopped"

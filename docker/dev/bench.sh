#!/usr/bin/env bash
# `make bench`: the benchmarks of the portal itself; figures in bench/results/.
set -euo pipefail
. "$(dirname "$0")/env.sh"
# No canary of the weather's by itself, as in make test: the benches measure a quiet
# cluster (the weather's bench starts the canaries it counts).
export WEATHER_MINUTES=${WEATHER_MINUTES:-0}
# Nor a periodic storage scan or purge: each is a job on the cluster the tests share.
export SCAN_INTERVAL_HOURS=${SCAN_INTERVAL_HOURS:-0} PURGE_INTERVAL_HOURS=${PURGE_INTERVAL_HOURS:-0}
"$STORAGELAB_ROOT/docker/dev/up.sh"
cd "$STORAGELAB_ROOT"
export REDIS_URL=${TEST_REDIS_URL:-redis://127.0.0.1:6379/1} LOG_LEVEL=${LOG_LEVEL:-WARNING}
exec "$VENV/bin/pytest" bench -p no:cacheprovider -q -s "$@"

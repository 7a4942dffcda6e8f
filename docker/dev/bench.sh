#!/usr/bin/env bash
# `make bench`: the benchmarks of the portal itself; figures in bench/results/.
set -euo pipefail
. "$(dirname "$0")/env.sh"
"$STORAGELAB_ROOT/docker/dev/up.sh"
cd "$STORAGELAB_ROOT"
export REDIS_URL=${TEST_REDIS_URL:-redis://127.0.0.1:6379/1} LOG_LEVEL=${LOG_LEVEL:-WARNING}
exec "$VENV/bin/pytest" bench -p no:cacheprovider -q -s "$@"

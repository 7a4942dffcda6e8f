#!/usr/bin/env bash
# `make test`: the same set-up as `make demo` without the web server, then the
# linters and every test (unit, live Slurm integration, Playwright in Chromium).
set -euo pipefail
. "$(dirname "$0")/env.sh"
# No canary of the weather's by itself: the tests measure a quiet cluster, and the
# weather's own tests start the canaries they look at.
export WEATHER_MINUTES=${WEATHER_MINUTES:-0}
"$STORAGELAB_ROOT/docker/dev/up.sh"
# Docker and Compose, for the image's test (tests/deploy/).
"$STORAGELAB_ROOT/docker/dev/docker.sh"
# The multi-node cluster of Slurm 24.11 in containers, for the tests against today's
# Slurm (tests/jobs/test_slurm_24_live.py). Built once (about a minute), started in 5 s.
"$STORAGELAB_ROOT/docker/cluster/start.sh"

cd "$STORAGELAB_ROOT"
say "ruff check, ruff format --check, makemigrations --check"
"$VENV/bin/ruff" check .
"$VENV/bin/ruff" format --check .
"$VENV/bin/python" manage.py makemigrations --check --dry-run >/dev/null ||
  die "models changed without a migration: run manage.py makemigrations"

# Tests get a Redis database of their own, away from the demo's worker.
export REDIS_URL=${TEST_REDIS_URL:-redis://127.0.0.1:6379/1}
exec "$VENV/bin/pytest" "$@"

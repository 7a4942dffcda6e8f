#!/usr/bin/env bash
# `make test`: the same set-up as `make demo` without the web server, then the
# linters and every test (unit, live Slurm integration, Playwright in Chromium).
set -euo pipefail
. "$(dirname "$0")/env.sh"
# No canary of the weather's by itself: the tests measure a quiet cluster, and the
# weather's own tests start the canaries they look at.
export WEATHER_MINUTES=${WEATHER_MINUTES:-0}
# up.sh brings up Docker and Compose too (the dev cluster runs in containers, and the
# image's test, tests/deploy/, needs them).
"$STORAGELAB_ROOT/docker/dev/up.sh"

cd "$STORAGELAB_ROOT"
say "ruff check, ruff format --check, makemigrations --check"
"$VENV/bin/ruff" check .
"$VENV/bin/ruff" format --check .
"$VENV/bin/python" manage.py makemigrations --check --dry-run >/dev/null ||
  die "models changed without a migration: run manage.py makemigrations"

# Tests get a Redis database of their own, away from the demo's worker.
export REDIS_URL=${TEST_REDIS_URL:-redis://127.0.0.1:6379/1}
exec "$VENV/bin/pytest" "$@"

#!/usr/bin/env bash
# `make test`: the same set-up as `make demo` without the web server, then the
# linters and every test (unit, live Slurm integration, Playwright in Chromium).
set -euo pipefail
. "$(dirname "$0")/env.sh"
# No canary of the weather's by itself: the tests measure a quiet cluster, and the
# weather's own tests start the canaries they look at.
export WEATHER_MINUTES=${WEATHER_MINUTES:-0}
# Nor a periodic storage scan or purge: each is a job on the cluster the tests share.
export SCAN_INTERVAL_HOURS=${SCAN_INTERVAL_HOURS:-0} PURGE_INTERVAL_HOURS=${PURGE_INTERVAL_HOURS:-0}
# Where the minutes go, said at the end (CI keeps the last lines of the output).
began=$SECONDS
# up.sh brings up Docker and Compose too (the dev cluster runs in containers, and the
# image's test, tests/deploy/, needs them).
"$STORAGELAB_ROOT/docker/dev/up.sh"

set_up=$((SECONDS - began))
cd "$STORAGELAB_ROOT"
say "ruff check, ruff format --check, makemigrations --check"
"$VENV/bin/ruff" check .
"$VENV/bin/ruff" format --check .
"$VENV/bin/python" manage.py makemigrations --check --dry-run >/dev/null ||
  die "models changed without a migration: run manage.py makemigrations"

# Tests get Redis databases of their own, away from the demo's worker: this one, and
# one more for each parallel worker (tests/conftest.py).
export REDIS_URL=${TEST_REDIS_URL:-redis://127.0.0.1:6379/1}

# Most tests wait on Slurm, a browser or a process they started, not on a core: they
# run TEST_WORKERS at a time, each worker with its own test database and Redis
# database. Then, one after another, the tests marked `alone`, which measure the
# cluster, hold all of it or stop a part everyone shares. Arguments go to both parts.
linted=$SECONDS
workers=${TEST_WORKERS:-3}
say "the tests that may run together, $workers at a time"
together=0
"$VENV/bin/pytest" -n "$workers" --dist worksteal -m "not alone" "$@" || together=$?
alone_began=$SECONDS
say "the tests that run alone"
alone=0
"$VENV/bin/pytest" -m alone "$@" || alone=$?
minutes() { printf '%d min %02d s' $(($1 / 60)) $(($1 % 60)); }
say "make test took $(minutes $((SECONDS - began))): set-up $(minutes "$set_up"), linters \
$(minutes $((linted - began - set_up))), the parallel part $(minutes $((alone_began - linted))), \
the part alone $(minutes $((SECONDS - alone_began)))"
# 5 is pytest's "no test selected": arguments may select tests of one part only.
if [[ $together -eq 5 && $alone -eq 5 ]]; then exit 5; fi
for status in $together $alone; do
  if [[ $status -ne 0 && $status -ne 5 ]]; then
    die "tests failed (the parallel part: exit $together; the part alone: exit $alone)"
  fi
done

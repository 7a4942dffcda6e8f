#!/usr/bin/env bash
# `make quick`: the inner loop. The tests that need neither the live cluster nor a
# browser (pytest -m "not live and not e2e"), against PostgreSQL alone, two at a time.
# Run `make test` (or `make demo`) once first: it installs the venv and the database.
set -euo pipefail
. "$(dirname "$0")/env.sh"
[ -x "$VENV/bin/pytest" ] || die "no venv in $VENV yet: run 'make test' once first"
pg_isready -q -h "$DB_HOST" -p "$DB_PORT" ||
  die "PostgreSQL does not answer on $DB_HOST:$DB_PORT: run 'make test' once, or start it"
cd "$STORAGELAB_ROOT"
exec "$VENV/bin/pytest" -n "${TEST_WORKERS:-2}" -m "not live and not e2e" "$@"

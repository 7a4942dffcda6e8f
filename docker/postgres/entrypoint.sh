#!/usr/bin/env bash
# PostgreSQL's entrypoint (docker/postgres/Dockerfile), with the environment of the
# official image: on a first start (an empty PGDATA) it makes the cluster, the
# superuser POSTGRES_USER (default postgres) with the password POSTGRES_PASSWORD or
# the one in the file POSTGRES_PASSWORD_FILE (required), and the database
# POSTGRES_DB (default: the user's name); then it runs the server as postgres.
# Arguments starting with "-" are the server's: `-c listen_addresses=127.0.0.1`.
set -euo pipefail
say() { printf '[postgres-entrypoint] %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

[ "${1:0:1}" = - ] && set -- postgres "$@"
[ "${1:-}" = postgres ] || exec "$@"

# As root: read the secret (the file may be readable by root only), give PGDATA to
# postgres, and start again as postgres.
if [ "$(id -u)" = 0 ]; then
  if [ -n "${POSTGRES_PASSWORD_FILE:-}" ]; then
    [ -r "$POSTGRES_PASSWORD_FILE" ] || die "POSTGRES_PASSWORD_FILE: cannot read $POSTGRES_PASSWORD_FILE"
    POSTGRES_PASSWORD=$(cat "$POSTGRES_PASSWORD_FILE")
    export POSTGRES_PASSWORD
    unset POSTGRES_PASSWORD_FILE
  fi
  install -d -o postgres -g postgres -m 0700 "$PGDATA"
  install -d -o postgres -g postgres -m 3777 /var/run/postgresql
  export HOME=/var/lib/postgresql
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi

if [ -n "${POSTGRES_PASSWORD_FILE:-}" ]; then
  POSTGRES_PASSWORD=$(cat "$POSTGRES_PASSWORD_FILE")
fi
user=${POSTGRES_USER:-postgres}
db=${POSTGRES_DB:-$user}

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  [ -n "${POSTGRES_PASSWORD:-}" ] || die "a first start needs POSTGRES_PASSWORD or POSTGRES_PASSWORD_FILE"
  say "making a cluster in $PGDATA (superuser $user, database $db)"
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  initdb --pgdata="$PGDATA" --username="$user" --pwfile="$pwfile" --encoding=UTF8 \
    --locale=C.UTF-8 --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$pwfile"
  # Clients come over the container's network: every address, with a password.
  printf 'host all all all scram-sha-256\n' >>"$PGDATA/pg_hba.conf"
  printf "listen_addresses = '*'\n" >>"$PGDATA/postgresql.conf"
  if [ "$db" != postgres ]; then
    # A server on the socket alone while the database is made: no client sees it
    # half made (a health check over TCP waits for the real start).
    pg_ctl --pgdata="$PGDATA" --options="-c listen_addresses=''" --wait --silent start
    psql --username="$user" --dbname=postgres --set=ON_ERROR_STOP=1 --quiet \
      --set=db="$db" <<<'CREATE DATABASE :"db";'
    pg_ctl --pgdata="$PGDATA" --mode=fast --wait --silent stop
  fi
fi
unset POSTGRES_PASSWORD
exec "$@"

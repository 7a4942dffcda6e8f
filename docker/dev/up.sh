#!/usr/bin/env bash
# Brings up everything but the web server: system packages, the Python venv,
# PostgreSQL, Redis, the dev Slurm cluster (in containers), the database, the demo accounts, the
# Celery workers (runs; quotas; results; Darshan logs) and beat. Idempotent: reuses what already runs.
# Prints the names of the services it started itself, one a line, on fd 3 (if open),
# so that `make demo` can stop exactly those: each as soon as it is started, so that a
# Ctrl-C during the start-up still stops it. A service found running is not named, not
# even when it is restarted because it ran other code. The daemons get no fd 3: one
# that held it (a pipe, say) would keep its reader waiting for as long as it runs.
set -euo pipefail
. "$(dirname "$0")/env.sh"
[ "$(id -u)" = 0 ] || die "run as root (sudo make ...): it installs packages and starts daemons"
started() { { printf '%s\n' "$1" >&3; } 2>/dev/null || true; }

# --- packages, the portal's users and the venv -----------------------------------
# Docker first, then the cluster's images building in the background (on a fresh
# machine about three minutes, mostly downloads) while the other packages, the venv,
# PostgreSQL, Redis and darshan-runtime are set up: docker/cluster/start.sh, below,
# waits for that build. (Neither debootstrap nor a build takes this machine's apt lock.)
"$STORAGELAB_ROOT/docker/dev/docker.sh" 3>&-
"$STORAGELAB_ROOT/docker/cluster/image.sh" >>"$LOG_DIR/cluster-image.log" 2>&1 3>&- &
apt_install postgresql redis-server python3-venv chromium fonts-dejavu-core ca-certificates libjs-chart.js
# The web server and the workers run as the portal's own user, never root (lib.sh:
# as_portal); each Darshan log is read as a user who owns nothing at all.
for user in "$PORTAL_USER" storagelab-sandbox; do
  id -u "$user" >/dev/null 2>&1 ||
    useradd --system --user-group --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin "$user"
done
# Debian's Python, which every user may run (a pyenv's lives under /root, closed to them).
if [ -x "$VENV/bin/python" ] && [ "$(readlink -f "$VENV/bin/python")" != "$(readlink -f /usr/bin/python3)" ]; then
  say "the venv in $VENV runs $(readlink -f "$VENV/bin/python"), not Debian's python3: making it again"
  rm -rf "$VENV"
fi
if [ ! -x "$VENV/bin/python" ]; then
  say "creating the venv in $VENV"
  /usr/bin/python3 -m venv "$VENV"
fi
reachable_by "$PORTAL_USER" "$STORAGELAB_ROOT/manage.py"
reachable_by storagelab-sandbox "$STORAGELAB_ROOT/jobio/confine.py"
# The secrets made here: the portal's group reads them (root writes them).
for secret in "$SECRET_KEY_FILE" "$REDIS_PASSWORD_FILE" "${DB_PASSWORD_FILE:-}"; do
  case "$secret" in "$STATE_DIR"/*) chgrp "$PORTAL_USER" "$secret" && chmod 0640 "$secret" ;; esac
done
install -d -o "$PORTAL_USER" -g "$PORTAL_USER" -m 0700 "$STATE_DIR/beat"
# The dev venv has the runtime packages and the tests' (requirements-dev.txt).
stamp="$VENV/.requirements.sha256"
pinned=$(cat "$STORAGELAB_ROOT"/requirements.txt "$STORAGELAB_ROOT"/requirements-dev.txt | sha256sum)
if [ "$pinned" != "$(cat "$stamp" 2>/dev/null)" ]; then
  say "installing the pinned Python packages"
  "$VENV/bin/pip" install -q --disable-pip-version-check -r "$STORAGELAB_ROOT/requirements-dev.txt"
  echo "$pinned" >"$stamp"
fi
# The browser tests check each page against axe-core's accessibility rules, injected
# from node_modules/ (tests/e2e/axe.py): the version package-lock.json pins, from the
# npm registry, again only when the lock changed (npm ci empties node_modules/ first,
# the stamp with it). Debian's npm where none is installed. No package's scripts run.
command -v npm >/dev/null || apt_install nodejs npm
stamp="$STORAGELAB_ROOT/node_modules/.package-lock.sha256"
pinned=$(cat "$STORAGELAB_ROOT"/package.json "$STORAGELAB_ROOT"/package-lock.json | sha256sum)
if [ "$pinned" != "$(cat "$stamp" 2>/dev/null)" ]; then
  say "installing the pinned npm packages (axe-core, for the browser tests)"
  (cd "$STORAGELAB_ROOT" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
  echo "$pinned" >"$stamp"
fi

# --- PostgreSQL: reuse one that answers, else start Debian's cluster -----------
if ! pg_isready -q -h "$DB_HOST" -p "$DB_PORT"; then
  read -r pg_version pg_cluster _ < <(pg_lsclusters -h | head -n 1)
  [ -n "${pg_version:-}" ] || die "no PostgreSQL cluster found (pg_lsclusters shows none)"
  pg_ctlcluster "$pg_version" "$pg_cluster" start 3>&-
  head -n 1 "/var/lib/postgresql/$pg_version/$pg_cluster/postmaster.pid" >"$RUN_DIR/postgresql.pid"
  started postgresql
  wait_for PostgreSQL 30 pg_isready -q -h "$DB_HOST" -p "$DB_PORT"
  say "started PostgreSQL $pg_version/$pg_cluster (pid $(cat "$RUN_DIR/postgresql.pid"))"
fi
if [ "$DB_HOST" = 127.0.0.1 ] || [ "$DB_HOST" = localhost ]; then
  # The local dev database: a role that may also create the test database.
  as_postgres() { runuser -u postgres -- "$@" -p "$DB_PORT"; }
  as_postgres psql -tAc "SELECT 1 FROM pg_roles WHERE rolname = '$DB_USER'" | grep -q 1 ||
    as_postgres psql -q -c "CREATE ROLE \"$DB_USER\" LOGIN CREATEDB"
  # Its password, on stdin (never a command line), each start: the file is the truth.
  db_password=${DB_PASSWORD:-$(cat "$DB_PASSWORD_FILE")}
  printf "ALTER ROLE \"%s\" PASSWORD '%s';\n" "$DB_USER" "$db_password" | as_postgres psql -q
  as_postgres psql -tAc "SELECT 1 FROM pg_database WHERE datname = '$DB_NAME'" | grep -q 1 ||
    as_postgres createdb -O "$DB_USER" "$DB_NAME"
fi

# --- Redis, with a password ----------------------------------------------------
redis_port=$(printf '%s' "$REDIS_URL" | sed -n 's|^redis://[^/:]*:\([0-9]*\).*|\1|p')
redis_port=${redis_port:-6379}
# redis-cli takes the password from the environment: never on a command line.
redis_ping() { REDISCLI_AUTH=$(cat "$REDIS_PASSWORD_FILE") redis-cli -p "$redis_port" ping 2>/dev/null | grep -q PONG; }
if redis-cli -p "$redis_port" ping 2>/dev/null | grep -q PONG; then
  # One that answers anyone: ours from before Redis had a password, started again.
  alive "$RUN_DIR/redis.pid" ||
    die "a Redis on port $redis_port answers without a password and was not started here: stop it, or set REDIS_URL to another"
  say "Redis answers without a password: restarting it with one"
  stop_pidfile redis "$RUN_DIR/redis.pid"
fi
if ! redis_ping; then
  # Its settings in a file only root reads, the password among them.
  (umask 077 && printf 'requirepass %s\n' "$(cat "$REDIS_PASSWORD_FILE")" >"$STATE_DIR/redis.conf")
  redis-server "$STATE_DIR/redis.conf" --bind 127.0.0.1 --port "$redis_port" --save '' \
    --appendonly no --daemonize yes --pidfile "$RUN_DIR/redis.pid" --logfile "$LOG_DIR/redis.log" 3>&-
  started redis
  wait_for Redis 10 redis_ping
  say "started Redis (pid $(cat "$RUN_DIR/redis.pid"))"
fi

# --- the dev cluster: Slurm 26.05 in containers, the targets, the accounts ---------
/usr/bin/docker ps -q --filter name=slurm-ctl 2>/dev/null | grep -q . || started slurm
"$STORAGELAB_ROOT/docker/slurm/start.sh" 3>&-
portal_for_nodes

# --- the portal's database and demo accounts -----------------------------------
cd "$STORAGELAB_ROOT"
"$VENV/bin/python" manage.py migrate --no-input -v 0
"$VENV/bin/python" manage.py collectstatic --no-input -v 0
"$VENV/bin/python" manage.py load_site_profile "${SITE_PROFILE:-dev}"
# The demo logins (password storagelab) are a dev machine's only: the command refuses
# to run without DEBUG, which the portal itself runs without.
DEBUG=true "$VENV/bin/python" manage.py create_demo_accounts

# --- the Darshan log reader's sandbox --------------------------------------------
# Each log is read by a child that storagelab-sandbox starts as storagelab-sandbox, who
# owns nothing of the portal's (jobio/sandbox.py; DARSHAN_SANDBOX_USER): the one program
# of the portal given a capability (to switch to that user, and no other).
"$STORAGELAB_ROOT/docker/sandbox/build.sh"

# --- Celery workers and beat ----------------------------------------------------
# As the portal's user (as-portal.sh), never root. Below the web server's
# priority: when a class clicks at once, pages answer first and the submissions
# (rate-limited anyway) take the CPU that is left.
as_portal=$STORAGELAB_ROOT/docker/dev/as-portal.sh
start_bg celery-worker "$as_portal" - env CALIBRATION_PARALLEL="$DEV_CALIBRATION_PARALLEL" \
  nice -n 10 "$VENV/bin/celery" -A portal worker --loglevel INFO \
  --queues celery --concurrency 2 && started celery-worker
# Quota rounds on a worker of their own (queue "quotas", CELERY_TASK_ROUTES), where the
# filesystems are mounted: a round waiting on a hung mount holds no submission's slot.
# The dev targets have no quota tool: the round walks each account's directory (0700,
# the account's own), with the one capability that lets it look, not change.
start_bg celery-quotas "$as_portal" dac_read_search nice -n 10 "$VENV/bin/celery" -A portal \
  worker --loglevel INFO --queues quotas --concurrency 1 --hostname quotas@%h &&
  started celery-quotas
# Jobs' outputs are read on a worker of their own (queue "results"): an output is its
# job owner's text, and reading one (bounded by the task's time limits) must never
# hold the workers that submit and follow everyone's runs.
start_bg celery-results "$as_portal" - nice -n 10 "$VENV/bin/celery" -A portal worker \
  --loglevel INFO --queues results --concurrency 1 --hostname results@%h &&
  started celery-results
# Darshan logs users send are read on a worker of their own too (queue "darshan"): each
# log's reader is started as the sandbox user by storagelab-sandbox.
start_bg celery-darshan "$as_portal" file nice -n 10 "$VENV/bin/celery" -A portal worker \
  --loglevel INFO --queues darshan --concurrency 2 --hostname darshan@%h &&
  started celery-darshan
# Beat sends one quota collection as it starts (portal/celery.py), so My storage
# shows usage within seconds, not one QUOTA_INTERVAL_SECONDS later.
start_bg celery-beat "$as_portal" - nice -n 10 "$VENV/bin/celery" -A portal beat \
  --loglevel INFO --schedule "$STATE_DIR/beat/celerybeat-schedule" && started celery-beat
true

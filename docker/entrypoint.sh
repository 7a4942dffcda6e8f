#!/usr/bin/env bash
# The image's entrypoint (under tini): the first argument picks the role.
#
#   web         gunicorn on GUNICORN_BIND (default 0.0.0.0:8000), configured in
#               docker/gunicorn.conf.py
#   migrate     apply the database migrations, then exit. A one-off of its own, not a
#               step of `web`: compose runs it once before web, the workers and beat
#               start (depends_on: service_completed_successfully), so that two web
#               replicas never migrate at once and no worker runs on an old schema.
#   worker      Celery worker for runs (queue "celery"; CELERY_CONCURRENCY, default 2)
#   quotas      Celery worker for quota rounds (queue "quotas", concurrency 1): run it
#               where the storage filesystems are mounted (README, "quotas")
#   results     Celery worker that reads the outputs jobs post (queue "results",
#               concurrency 1): what a job posts is its owner's text, read within the
#               task's time limits, never on the workers that submit runs
#   darshan     Celery worker that reads the Darshan logs users send (queue "darshan",
#               concurrency 2), as the image's user with no capability: each log's
#               reader is started as DARSHAN_SANDBOX_USER by storagelab-sandbox, whose
#               file capabilities compose.yaml lets it use (and nothing else)
#   beat        Celery beat (the sync every SYNC_INTERVAL_SECONDS, quota rounds); its
#               schedule file lives in /var/lib/storagelab (a volume). One beat only.
#   manage ...  python manage.py ..., e.g. `manage load_site_profile NAME`,
#               `manage createsuperuser`, `manage check --deploy`
#   healthcheck [web|worker|quotas|results|darshan]   the containers' health checks
#   anything else is run as a command (bash, for a look around)
#
# Every setting comes from the environment (docker/site.env, the README's table).
# Secrets come from files, never from the environment: SECRET_KEY_FILE,
# DB_PASSWORD_FILE, SLURM_JWT_KEY_FILE (compose mounts docker/secrets/ at
# /run/secrets). They must be readable by this image's user, UID 65532 (PORTAL_UIDS).
#
# Jobs run only as accounts the system knows (portal/accounts.py: getent passwd), so
# the containers must see the cluster's accounts through NSS: mount the host's
# /etc/passwd and /etc/group read-only (compose.yaml does), or SSSD's pipes
# (/var/lib/sss/pipes; the image has libnss-sss and nsswitch.conf asks sss).
set -euo pipefail
cd /app

say() { printf '[storagelab] %s\n' "$*" >&2; }
die() { printf '[storagelab] error: %s\n' "$*" >&2; exit 1; }

# A secret named by NAME_FILE must be readable now, not at the first request that
# needs it (the Slurm key is read only when a job is submitted).
check_secret_files() {
  local name path
  for name in SECRET_KEY_FILE DB_PASSWORD_FILE REDIS_PASSWORD_FILE SLURM_JWT_KEY_FILE \
    SLURM_SERVICE_TOKEN_FILE OIDC_RP_CLIENT_SECRET_FILE; do
    path=${!name:-}
    [ -n "$path" ] || continue
    [ -e "$path" ] || die "$name: $path does not exist (is docker/secrets/ mounted at /run/secrets?)"
    [ -r "$path" ] ||
      die "$name: $path is not readable by UID $(id -u): on the host, chown $(id -u) it (mode 0400)"
  done
}

# Warn when NSS knows no account that jobs could run as: the host's passwd is not
# mounted (or SSSD's pipes are not). Only a warning: SSSD may not enumerate users.
check_accounts() {
  local min=${CLUSTER_UID_MIN:-1000}
  if ! getent passwd | awk -F: -v min="$min" -v own="${PORTAL_UIDS:-}" '$3 >= min && $3 < 65534 && $3 != own {found = 1} END {exit !found}'; then
    say "warning: no account with a UID of at least $min is known here (getent passwd):" \
      "mount the host's /etc/passwd and /etc/group, or SSSD's pipes, or no job can run"
  fi
}

healthcheck() {
  case "${1:-web}" in
  web)
    # /healthz, asked for with a host name the portal accepts (ALLOWED_HOSTS).
    exec python3 - <<'PY'
import os, sys, urllib.request

port = os.getenv("GUNICORN_BIND", "0.0.0.0:8000").rpartition(":")[2]
host = os.getenv("ALLOWED_HOSTS", "localhost").split(",")[0].strip().lstrip(".")
if host in ("", "*"):
    host = "localhost"
request = urllib.request.Request(f"http://127.0.0.1:{port}/healthz", headers={"Host": host})
try:
    with urllib.request.urlopen(request, timeout=8) as answer:
        sys.exit(0 if answer.status == 200 else 1)
except Exception as e:  # 503 "failing", refused, timed out
    print(f"healthz: {e}")
    sys.exit(1)
PY
    ;;
  worker | quotas | results | darshan)
    # The worker answers a ping through the broker.
    exec celery -A portal inspect ping --timeout 10 --destination "$1@$HOSTNAME" >/dev/null
    ;;
  *) die "healthcheck: web, worker, quotas, results or darshan, not '$1'" ;;
  esac
}

role=${1:-web}
[ $# -gt 0 ] && shift
case "$role" in
web)
  check_secret_files
  check_accounts
  exec gunicorn --config /app/docker/gunicorn.conf.py "$@"
  ;;
migrate)
  check_secret_files
  exec python3 manage.py migrate --no-input "$@"
  ;;
worker)
  check_secret_files
  check_accounts
  exec celery -A portal worker --loglevel "${LOG_LEVEL:-INFO}" --queues celery \
    --concurrency "${CELERY_CONCURRENCY:-2}" --hostname "worker@$HOSTNAME" "$@"
  ;;
quotas)
  check_secret_files
  check_accounts
  exec celery -A portal worker --loglevel "${LOG_LEVEL:-INFO}" --queues quotas \
    --concurrency 1 --hostname "quotas@$HOSTNAME" "$@"
  ;;
results)
  check_secret_files
  exec celery -A portal worker --loglevel "${LOG_LEVEL:-INFO}" --queues results \
    --concurrency 1 --hostname "results@$HOSTNAME" "$@"
  ;;
darshan)
  check_secret_files
  exec celery -A portal worker --loglevel "${LOG_LEVEL:-INFO}" --queues darshan \
    --concurrency 2 --hostname "darshan@$HOSTNAME" "$@"
  ;;
beat)
  check_secret_files
  exec celery -A portal beat --loglevel "${LOG_LEVEL:-INFO}" \
    --schedule /var/lib/storagelab/celerybeat-schedule "$@"
  ;;
manage)
  exec python3 manage.py "$@"
  ;;
healthcheck)
  healthcheck "$@"
  ;;
*)
  exec "$role" "$@"
  ;;
esac

# The dev site's environment, sourced by the dev scripts. Every variable can be
# overridden from outside; the README lists what a real site sets.
STORAGELAB_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$STORAGELAB_ROOT/docker/lib.sh"

VENV=${VENV:-$STORAGELAB_ROOT/.venv}
mkdir -p "$STATE_DIR" "$RUN_DIR" "$LOG_DIR"
# A secret key made once per machine, readable by root only.
if [ ! -s "$STATE_DIR/secret_key" ]; then
  (umask 077 && head -c 48 /dev/urandom | base64 >"$STATE_DIR/secret_key")
fi
export SECRET_KEY_FILE=${SECRET_KEY_FILE:-$STATE_DIR/secret_key}
# Redis answers only with a password, made once per machine like the key: the broker
# runs whatever task it is handed, and the cache unpickles what it reads.
if [ ! -s "$STATE_DIR/redis_password" ]; then
  (umask 077 && head -c 24 /dev/urandom | base64 | tr -d '/+=' >"$STATE_DIR/redis_password")
fi
export REDIS_PASSWORD_FILE=${REDIS_PASSWORD_FILE:-$STATE_DIR/redis_password}
export DB_NAME=${DB_NAME:-storagelab} DB_USER=${DB_USER:-storagelab}
export DB_HOST=${DB_HOST:-127.0.0.1} DB_PORT=${DB_PORT:-5432}
# The database's password, made once per machine too (up.sh gives it to the role).
if [ -z "${DB_PASSWORD:-}" ]; then
  if [ ! -s "$STATE_DIR/db_password" ]; then
    (umask 077 && head -c 24 /dev/urandom | base64 | tr -d '/+=' >"$STATE_DIR/db_password")
  fi
  export DB_PASSWORD_FILE=${DB_PASSWORD_FILE:-$STATE_DIR/db_password}
fi
export REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379/0}
# The dev cluster (docker/cluster/start.sh): Slurm 26.05 in containers, its slurmrestd
# on this host's port 6821, its JWT key in the cluster's state. CLUSTER_SLURM=24.11
# runs Debian 13's Slurm instead (cluster storagelab24). CLUSTER_PREFIX=h7- (with a
# CLUSTER_REST_PORT of its own) names a second cluster beside the dev site's, for
# trying a change to the cluster while the dev site's runs on: its containers
# (h7-slurm-ctl, ...), network and keys ($STATE_DIR/h7-cluster) are its own.
export CLUSTER_SLURM=${CLUSTER_SLURM:-26.05}
export CLUSTER_PREFIX=${CLUSTER_PREFIX:-}
export SLURMRESTD_URL=${SLURMRESTD_URL:-http://127.0.0.1:${CLUSTER_REST_PORT:-6821}}
export SLURM_JWT_KEY_FILE=${SLURM_JWT_KEY_FILE:-$STATE_DIR/${CLUSTER_PREFIX}cluster/etc/jwt_hs256.key}
export SLURM_PARTITION=${SLURM_PARTITION:-debug}
export SLURM_CLUSTER_NAME=${SLURM_CLUSTER_NAME:-storagelab${CLUSTER_SLURM%%.*}}
# Its nodes claim 8 CPUs on this machine's cores: MPI ranks are not bound to cores.
# Slurm 26.05 with JWT refuses srun inside a job; Open MPI's mpirun starts the ranks.
export MPI_LAUNCHER=${MPI_LAUNCHER:-mpirun --bind-to none}
export STATIC_ROOT=${STATIC_ROOT:-$STATE_DIR/static}
# One node: a calibration's runs one at a time, or two of them on $TMPDIR (two cores'
# memory copies) would measure each other. Given to the worker and to the demo's
# round only: the tests set their own.
DEV_CALIBRATION_PARALLEL=${CALIBRATION_PARALLEL:-1}
# The filesystem's weather: canaries as the demo's service login `weather` (cluster
# account sl-weather), every WEATHER_MINUTES. `make test` turns them off for the
# services it starts (docker/dev/test.sh): its tests measure a quiet cluster.
export WEATHER_ACCOUNT=${WEATHER_ACCOUNT-weather}
# Each lab run records its own I/O with the darshan-runtime docker/slurm/start.sh built
# (RUN_DARSHAN_RUNTIME= turns it off).
export RUN_DARSHAN_RUNTIME=${RUN_DARSHAN_RUNTIME-/opt/storagelab/darshan/lib/libdarshan.so}
# Replay my job on the dev cluster: each target for 3 s (the exercises' 2, and a
# second more), at most 256 MiB (its small filesystems), so that six targets answer
# within a minute.
export REPLAY_SECONDS=${REPLAY_SECONDS-3}
export REPLAY_MAX_BYTES=${REPLAY_MAX_BYTES-268435456}
# My storage: the dev cluster's $SCRATCH is purged by the portal itself (nothing else
# purges it), by dev.toml's [targets.purge] (14 days unread), as each account's job;
# e-mail on a forecast or purge crossing its line goes to the workers' logs (the
# console backend). `make test` and `make bench` start no periodic scan or purge.
export PURGE_TARGETS=${PURGE_TARGETS-scratch}
export STORAGE_NOTICES=${STORAGE_NOTICES-true}
export EMAIL_BACKEND=${EMAIL_BACKEND-django.core.mail.backends.console.EmailBackend}
export PORTAL_URL=${PORTAL_URL-http://127.0.0.1:${WEB_PORT:-8000}}
export DJANGO_SETTINGS_MODULE=portal.settings
# No proxy stands in front of the dev web server: people reach it on loopback, and jobs
# post from the cluster's network straight to it, where any of them could write any
# X-Forwarded-For. So none is believed; gunicorn would refuse a proxy count while it
# listens on the cluster's network with no TRUSTED_PROXIES named (docker/gunicorn.conf.py).
export TRUSTED_PROXY_COUNT=${TRUSTED_PROXY_COUNT:-0}
# portal_for_nodes: the portal's address as the cluster's nodes reach it, given to the
# workers (the job scripts post their results there) and the web server (which must
# answer to that name). The nodes reach this host on the cluster's network only, at
# its gateway, on the port of the demo's web server (WEB_PORT, 8000).
portal_for_nodes() {
  local gateway
  gateway=$(cluster_gateway)
  export PORTAL_CALLBACK_URL=${PORTAL_CALLBACK_URL:-http://$gateway:${WEB_PORT:-8000}}
  export ALLOWED_HOSTS=${ALLOWED_HOSTS:-127.0.0.1,localhost,$gateway}
}

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
export SLURMRESTD_URL=${SLURMRESTD_URL:-http://127.0.0.1:6820}
export SLURM_JWT_KEY_FILE=${SLURM_JWT_KEY_FILE:-/etc/slurm/jwt_hs256.key}
export SLURM_PARTITION=${SLURM_PARTITION:-debug}
# slurm.conf names it; Slurm 22.05's REST API does not.
export SLURM_CLUSTER_NAME=${SLURM_CLUSTER_NAME:-storagelab}
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
export DJANGO_SETTINGS_MODULE=portal.settings

#!/usr/bin/env bash
# image.sh: `make image`. Builds the portal's image (storagelab:latest) from a local
# wheelhouse, and, where no container registry can be reached, the Debian base image
# (docker/base-image.sh, debootstrap) and the PostgreSQL and Redis images
# (docker/postgres/, docker/redis/) from Debian's packages. Needs Docker and root.
#
# On stdout, the images for docker/compose.yaml, one NAME=IMAGE a line (put them in
# docker/.env, or export them):
#   STORAGELAB_IMAGE=storagelab:latest
#   POSTGRES_IMAGE=storagelab/postgres:15     (or postgres:15-bookworm where it pulls)
#   REDIS_IMAGE=storagelab/redis:7            (or redis:7-bookworm)
# Progress goes to stderr. Set BASE_IMAGE, POSTGRES_IMAGE or REDIS_IMAGE to impose
# one; STORAGELAB_IMAGE to tag the portal's image otherwise.
#
# The wheelhouse: the wheels of requirements.txt, downloaded on this machine (pip in
# a container cannot be assumed to reach or trust PyPI) into
# /var/cache/storagelab/wheelhouse/<hash of requirements.txt>, once per set of pins,
# then linked into docker/wheelhouse/ (gitignored) for the build. pip runs on
# Debian 12's Python, as the image does: this machine must be Debian 12 too.
# Docker keeps every layer: a build whose inputs did not change takes seconds. apt in
# the builds reaches Debian's mirror over Docker's default network (no --network host).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
ROOT=$(cd "$here/.." && pwd)
DOCKER=${DOCKER:-/usr/bin/docker}
CACHE=${STORAGELAB_CACHE_DIR:-/var/cache/storagelab}
IMAGE=${STORAGELAB_IMAGE:-storagelab:latest}
exec 3>&1 1>&2 # stdout: the results only

[ "$(id -u)" = 0 ] || die "run as root (sudo make image): it runs Docker and debootstrap"
"$DOCKER" info >/dev/null 2>&1 || die "Docker does not answer: docker/dev/docker.sh installs and starts it"
mkdir -p "$CACHE"
# One build at a time on this machine: they share docker/wheelhouse/.
exec 9>"$CACHE/image.lock"
flock 9
began=$SECONDS

have() { "$DOCKER" image inspect "$1" >/dev/null 2>&1; }
pulled() { timeout 120 "$DOCKER" pull -q "$1" >/dev/null 2>&1; }

# build TAG CONTEXT ARGS...: docker build with BuildKit, its log shown on failure.
build() {
  local tag=$1 context=$2 log t0=$SECONDS
  shift 2
  log=$(mktemp)
  if ! DOCKER_BUILDKIT=1 "$DOCKER" build --progress=plain --tag "$tag" "$@" "$context" >"$log" 2>&1; then
    tail -n 40 "$log"
    rm -f "$log"
    die "building $tag failed (the end of its log is above)"
  fi
  rm -f "$log"
  say "built $tag in $((SECONDS - t0)) s"
}

# --- the wheelhouse ------------------------------------------------------------------
# pip runs on Debian's own Python, the image's: it picks the wheels, and evaluates the
# requirements' markers (redis wants async-timeout below 3.11.3), for that Python and
# not for whichever python3 comes first on the PATH.
key=$(sha256sum "$ROOT/requirements.txt" | cut -c 1-16)
wheels=$CACHE/wheelhouse/$key
if [ ! -e "$wheels/.complete" ]; then
  say "downloading the wheels of requirements.txt into $wheels"
  apt_install python3-venv
  pip=$CACHE/pip-venv/bin/pip
  [ -x "$pip" ] || /usr/bin/python3 -m venv "$CACHE/pip-venv"
  rm -rf "$wheels.part"
  "$pip" download --quiet --disable-pip-version-check --only-binary=:all: \
    --requirement "$ROOT/requirements.txt" --dest "$wheels.part"
  touch "$wheels.part/.complete"
  mv "$wheels.part" "$wheels"
fi
rm -rf "$ROOT/docker/wheelhouse"
cp -al "$wheels" "$ROOT/docker/wheelhouse" 2>/dev/null || cp -a "$wheels" "$ROOT/docker/wheelhouse"

# --- the Debian base -------------------------------------------------------------------
# Imposed; Debian's own image if here or pullable; else ours, made once by debootstrap.
if [ -n "${BASE_IMAGE:-}" ]; then
  base=$BASE_IMAGE
elif have debian:bookworm-slim; then
  base=debian:bookworm-slim
elif have storagelab/debian:bookworm; then
  base=storagelab/debian:bookworm
elif pulled debian:bookworm-slim; then
  base=debian:bookworm-slim
else
  say "no registry: making the base image from Debian's packages"
  "$here/base-image.sh" storagelab/debian:bookworm
  base=storagelab/debian:bookworm
fi
say "base image: $base"

# --- the portal ----------------------------------------------------------------------------
build "$IMAGE" "$ROOT" --file "$ROOT/docker/Dockerfile" --build-arg "BASE_IMAGE=$base"

# --- PostgreSQL and Redis: the official images where they are, else ours ------------------
# service VAR OFFICIAL OURS DIR: the image for VAR. Once ours is built it is kept up to
# date (a rebuild from the layer cache takes a second) rather than asking a registry.
service() {
  local var=$1 official=$2 ours=$3 dir=$4
  if [ -n "${!var:-}" ]; then
    printf -v "$var" '%s' "${!var}"
  elif have "$official" || { ! have "$ours" && pulled "$official"; }; then
    printf -v "$var" '%s' "$official"
  else
    build "$ours" "$ROOT/docker/$dir" --build-arg "BASE_IMAGE=$base"
    printf -v "$var" '%s' "$ours"
  fi
}
service POSTGRES_IMAGE postgres:15-bookworm storagelab/postgres:15 postgres
service REDIS_IMAGE redis:7-bookworm storagelab/redis:7 redis

# Each build of new code leaves the image it replaced untagged: remove ours that no
# container uses (their layers shared with the new image stay).
"$DOCKER" image prune --force --filter label=org.storagelab.image >/dev/null

size=$("$DOCKER" image inspect --format '{{.Size}}' "$IMAGE" | awk '{printf "%.0f MB", $1 / 1e6}')
say "images ready in $((SECONDS - began)) s ($IMAGE: $size)"
printf 'STORAGELAB_IMAGE=%s\nPOSTGRES_IMAGE=%s\nREDIS_IMAGE=%s\n' \
  "$IMAGE" "$POSTGRES_IMAGE" "$REDIS_IMAGE" >&3

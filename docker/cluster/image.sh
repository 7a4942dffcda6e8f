#!/usr/bin/env bash
# docker/cluster/image.sh: the dev cluster's images, built when missing or when their
# files changed: the base by debootstrap (docker/base-image.sh; no registry here), then
# the cluster's image from docker/cluster/Dockerfile. Idempotent and safe to run twice
# at once: the second waits on the first (a lock) and then finds the image built.
# docker/dev/up.sh starts it in the background as soon as Docker runs, so that on a
# fresh machine the image builds while the venv and darshan-runtime are set up;
# docker/cluster/start.sh runs it again before it starts the containers (it then waits
# for that build, or builds itself if that one failed).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
DOCKER=${DOCKER:-/usr/bin/docker}
RELEASE=${CLUSTER_SLURM:-26.05}
case "$RELEASE" in
24.11) SUITE=trixie ;;
26.05) SUITE=forky ;;
*) die "CLUSTER_SLURM must be 24.11 or 26.05, not $RELEASE" ;;
esac
BASE=${CLUSTER_BASE_IMAGE:-storagelab/debian:$SUITE}
IMAGE=${CLUSTER_IMAGE:-storagelab/cluster:$RELEASE}

[ "$(id -u)" = 0 ] || die "run as root: it runs Docker"
mkdir -p "$RUN_DIR"
exec 9>"$RUN_DIR/cluster-image.lock"
if ! flock -n 9; then
  say "waiting for the cluster's image, which is being built (log: $LOG_DIR/cluster-image.log)"
  flock 9
fi

"$DOCKER" image inspect "$BASE" >/dev/null 2>&1 || DEBIAN_SUITE=$SUITE "$here/../base-image.sh" "$BASE"
stamp=$(cat "$here/Dockerfile" "$here/entrypoint.sh" "$here/../vendor/ior-5fcf0ba.tar.gz" | sha256sum | cut -c1-16)
built=$("$DOCKER" image inspect -f '{{index .Config.Labels "storagelab.stamp"}}' "$IMAGE" 2>/dev/null || true)
if [ "$built" != "$stamp" ]; then
  say "building $IMAGE (Slurm $RELEASE from Debian $SUITE)"
  "$DOCKER" build -q --build-arg BASE_IMAGE="$BASE" --label storagelab.stamp="$stamp" \
    -t "$IMAGE" -f "$here/Dockerfile" "$here/.." >/dev/null
fi

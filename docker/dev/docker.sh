#!/usr/bin/env bash
# docker.sh: what the container image needs on this machine, for `make image` and the
# compose test in `make test` (tests/deploy/): Debian's Docker engine (docker.io, 20.10),
# Debian's Compose (docker-compose 1.29.2, the one made for that engine), debootstrap
# (the base image where no registry can be reached), and dockerd running. Idempotent:
# a dockerd found answering is used as it is, whoever started it.
set -euo pipefail
. "$(dirname "$0")/env.sh"
[ "$(id -u)" = 0 ] || die "run as root (sudo make ...): it installs packages and starts dockerd"

apt_install docker.io docker-compose debootstrap

# Debian's client, whatever else is on the PATH: it talks to this engine's API and
# builds with the engine's own BuildKit.
docker_up() { /usr/bin/docker info >/dev/null 2>&1; }
if ! docker_up; then
  # No systemd here to start it: a daemon of the dev site like the others. It is left
  # running when `make test` ends (images and the layer cache stay).
  spawn "$RUN_DIR/dockerd.pid" "$LOG_DIR/dockerd.log" dockerd
  wait_for dockerd 60 docker_up
  say "started dockerd (pid $(cat "$RUN_DIR/dockerd.pid"))"
fi

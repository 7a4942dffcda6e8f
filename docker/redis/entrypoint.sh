#!/bin/sh
# Redis's entrypoint (docker/redis/Dockerfile): arguments starting with "-" are
# redis-server's; the server runs as redis, with /data its own.
set -eu
case "${1:-}" in -*) set -- redis-server "$@" ;; esac
if [ "${1:-}" = redis-server ] && [ "$(id -u)" = 0 ]; then
  chown redis:redis /data
  exec setpriv --reuid=redis --regid=redis --init-groups "$@"
fi
exec "$@"

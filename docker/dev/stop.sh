#!/usr/bin/env bash
# stop.sh [SERVICE...]: stops the named dev services (all by default) by their pids.
# Services: web celery-beat celery-quotas celery-results celery-darshan celery-worker slurm (the
# dev cluster's containers) redis postgresql
set -euo pipefail
. "$(dirname "$0")/env.sh"
services=${*:-web celery-beat celery-quotas celery-results celery-darshan celery-worker slurm redis postgresql}
for service in $services; do
  case "$service" in
  slurm) "$STORAGELAB_ROOT/docker/slurm/stop.sh" ;;
  web | celery-beat | celery-quotas | celery-results | celery-darshan | celery-worker | redis | postgresql)
    stop_pidfile "$service" "$RUN_DIR/$service.pid" ;;
  *) die "unknown service: $service" ;;
  esac
done

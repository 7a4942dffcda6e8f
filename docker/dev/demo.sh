#!/usr/bin/env bash
# `make demo`: the whole portal on this machine, at http://127.0.0.1:8000.
# Ctrl-C stops everything this run started (what already ran is left running).
set -euo pipefail
. "$(dirname "$0")/env.sh"
WEB_ADDR=${WEB_ADDR:-127.0.0.1:8000}
alive "$RUN_DIR/web.pid" &&
  die "Storage Lab already serves http://$WEB_ADDR (pid $(cat "$RUN_DIR/web.pid")); 'make stop' stops it"
port_open() { bash -c "exec 3<>/dev/tcp/${WEB_ADDR%:*}/${WEB_ADDR#*:}" 2>/dev/null; }
port_open && die "another program listens on $WEB_ADDR: stop it, or choose another address (make demo WEB_ADDR=127.0.0.1:8080)"

started_list=$(mktemp)
stop_started() {
  trap - INT TERM EXIT
  echo
  say "stopping what this run started"
  # Reverse order of start: clients before the servers they use.
  services=$(tac "$started_list" | tr '\n' ' ')
  [ -z "$services" ] || "$STORAGELAB_ROOT/docker/dev/stop.sh" $services
  rm -f "$started_list"
}
trap stop_started EXIT
trap 'exit 130' INT TERM # the EXIT trap then stops what was started

"$STORAGELAB_ROOT/docker/dev/up.sh" 3>"$started_list"

cd "$STORAGELAB_ROOT"
start_bg web "$VENV/bin/gunicorn" portal.wsgi --bind "$WEB_ADDR" --workers 3 --access-logfile -
echo web >>"$started_list"
wait_for "the web server" 20 port_open

cat <<TXT

  Storage Lab is up: http://$WEB_ADDR
  Demo logins (password: storagelab)
    admin         staff: the admin site and the health page (http://$WEB_ADDR/healthz)
    instructor    runs as cluster account sl-instructor; teaches "Storage course (demo)"
    trainee1..3   run as cluster accounts sl-trainee1..3; joined that course
  Logs: $LOG_DIR    Ctrl-C stops what this run started.

TXT
# Serve until Ctrl-C. gunicorn runs in a process group of its own (so a Ctrl-C
# reaches this script, not it), which makes it no child of this shell: `wait` on
# its pid returns at once. Watch the pid instead; `wait` on a short sleep lets the
# INT/TERM trap run as soon as the signal comes.
while alive "$RUN_DIR/web.pid"; do
  sleep 1 &
  wait $! || true
done
say "the web server stopped by itself; its log is $LOG_DIR/web.log"
exit 1

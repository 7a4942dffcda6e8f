#!/usr/bin/env bash
# `make demo`: the whole portal on this machine, at http://127.0.0.1:8000, until
# Ctrl-C. Ctrl-C (or a TERM, or the terminal closing) stops everything this run
# started; what already ran is left running.
set -euo pipefail
. "$(dirname "$0")/env.sh"
WEB_ADDR=${WEB_ADDR:-127.0.0.1:8000}
# The demo's logins share one password, printed below: this machine's loopback only.
web_host=${WEB_ADDR%:*}
web_host=${web_host#[}
web_host=${web_host%]}
case "$web_host" in
127.* | ::1 | localhost) ;;
*) die "make demo serves on this machine's loopback only (WEB_ADDR=127.0.0.1:PORT), not $WEB_ADDR: its demo logins, admin among them, share the password it prints, so anyone who reached $WEB_ADDR could log in as staff. To serve others, deploy the portal (README: Deploying at a site)" ;;
esac
# Jobs post their results to the web server from the cluster's nodes, at this host's
# address on their network and the same port (docker/dev/up.sh).
export WEB_PORT=${WEB_ADDR##*:}

# One demo at a time, and a refused one touches nothing (no trap is set yet).
if alive "$RUN_DIR/web.pid"; then
  die "Storage Lab already serves http://$(cat "$RUN_DIR/web.addr" 2>/dev/null || echo "$WEB_ADDR") (pid $(cat "$RUN_DIR/web.pid")): Ctrl-C in its terminal stops it, 'make stop' stops every dev service"
fi
if alive "$RUN_DIR/demo.pid"; then
  die "another 'make demo' (pid $(cat "$RUN_DIR/demo.pid")) is starting Storage Lab: wait for it, or Ctrl-C it"
fi
port_open() { bash -c "exec 3<>/dev/tcp/${WEB_ADDR%:*}/${WEB_ADDR#*:}" 2>/dev/null; }
port_open && die "another program listens on $WEB_ADDR: stop it, or choose another address (make demo WEB_ADDR=127.0.0.1:8080)"

echo $$ >"$RUN_DIR/demo.pid"
started_list=$(mktemp)
stop_started() {
  local code=$? services
  # Once begun, the clean-up runs to its end: a second Ctrl-C must not leave half of
  # the services running. Ignored here, INT and TERM are ignored by stop.sh too.
  trap '' INT TERM HUP PIPE
  trap - EXIT
  set +e
  # Nor may its output stop it: in `make demo | tee demo.log`, Ctrl-C ends that tee
  # too, and a write to its pipe would end this script (SIGPIPE, or an error under
  # set -e). Its words and stop.sh's go to the log as well, through a tee that goes on
  # when the pipe is gone (-p); a HUP has sent them there already.
  if [ -t 1 ] || [ -p /dev/stdout ]; then
    exec > >(tee -p -a "$LOG_DIR/demo.log") 2>&1
  fi
  echo
  say "stopping what this run started"
  # Reverse order of start: clients before the servers they use.
  services=$(tac "$started_list" | tr '\n' ' ')
  [ -z "$services" ] || "$STORAGELAB_ROOT/docker/dev/stop.sh" $services || code=1
  rm -f "$started_list"
  [ "$(cat "$RUN_DIR/demo.pid" 2>/dev/null)" != $$ ] || rm -f "$RUN_DIR/demo.pid"
  exit "$code"
}
# Every way out goes through the EXIT trap, which stops what was started. A closed
# terminal (HUP) can no longer be written to: the clean-up then reports to a log.
trap stop_started EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exec >>"$LOG_DIR/demo.log" 2>&1; say "the terminal closed"; exit 129' HUP

"$STORAGELAB_ROOT/docker/dev/up.sh" 3>"$started_list"
portal_for_nodes

cd "$STORAGELAB_ROOT"
# As the portal's user, never root, with the image's gunicorn settings (the access log
# without query strings among them). 2 x cores + 1 sync workers: a login holds its
# worker for a ~0.25 s password hash, and a class logging in must not leave the other
# pages waiting behind three of them (bench/).
# It listens on the loopback for people, and on the cluster's network for the jobs'
# results (only this host and the cluster's containers reach that address).
start_bg web "$STORAGELAB_ROOT/docker/dev/as-portal.sh" - env GUNICORN_BIND="$WEB_ADDR,$(cluster_gateway):$WEB_PORT" \
  GUNICORN_WORKERS=5 "$VENV/bin/gunicorn" --config "$STORAGELAB_ROOT/docker/gunicorn.conf.py"
echo web >>"$started_list"
echo "$WEB_ADDR" >"$RUN_DIR/web.addr"
web_pid=$(cat "$RUN_DIR/web.pid")
web_died() {
  say "the web server (pid $web_pid) exited, not by a Ctrl-C here; the end of its log, $LOG_DIR/web.log:"
  tail -n 15 "$LOG_DIR/web.log" | sed 's/^/    /'
  exit 1
}
for _ in $(seq 100); do
  port_open && break
  alive "$RUN_DIR/web.pid" || web_died
  sleep 0.2
done
port_open || die "the web server did not answer on $WEB_ADDR within 20s (log: $LOG_DIR/web.log)"

# The first start calibrates the site, so that every exercise page has the site's quiet
# figures to compare with (exercises/calibration/rounds.py), as the instructor's cluster
# account, carried on by Celery beat and the worker while the portal serves: first the
# demo course's first exercises (1a, 1b, 2a, 2b) once on every target, whose figures come
# within minutes; then every exercise three times on every target, which takes longer
# (each exercise page says how far it is). Once the web server answers: the jobs post
# their results to it. A later start measures only what has no figure yet (an exercise
# added or changed), and nothing while a round goes. DEMO_CALIBRATION_EXERCISES limits
# the rounds to those exercises.
CALIBRATION_PARALLEL=$DEV_CALIBRATION_PARALLEL \
  "$VENV/bin/python" manage.py calibrate --if-unmeasured --user instructor --repeat 3 \
  --first 1a,1b,2a,2b --first-repeat 1 ${DEMO_CALIBRATION_EXERCISES:+--exercises "$DEMO_CALIBRATION_EXERCISES"} ||
  say "the first calibration did not start (above); the portal serves without measured references"

cat <<TXT

  Storage Lab is up: http://$WEB_ADDR
  Demo logins (password: storagelab)
    admin         staff: the admin site and the health page (http://$WEB_ADDR/healthz)
    instructor    runs as cluster account sl-instructor; teaches "Storage course (demo)";
                  calibrates the site (http://$WEB_ADDR/lab/calibration/)
    trainee1..3   run as cluster accounts sl-trainee1..3; joined that course
  Logs: $LOG_DIR    Ctrl-C stops what this run started.

TXT
# Serve until Ctrl-C. gunicorn runs in a process group of its own (so a Ctrl-C
# reaches this script, not it), which makes it no child of this shell: `wait` on
# its pid fails at once. Watch the pid instead; `wait` on a short sleep returns as
# soon as a signal comes, so its trap runs at once.
while alive "$RUN_DIR/web.pid"; do
  sleep 1 &
  wait $! || true
done
web_died

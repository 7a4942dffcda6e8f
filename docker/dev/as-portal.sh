#!/usr/bin/env bash
# as-portal.sh CAPS COMMAND...: runs COMMAND in this process (the pid stays: a service's
# pid file names it) as the portal's own user, PORTAL_USER (storagelab: its groups, no
# other), never root. up.sh starts the workers with it, demo.sh the web server.
#   -                no capability, and none to gain (no_new_privs)
#   file             none held, but a program's file capabilities apply: the darshan
#                    worker's storagelab-sandbox, which may switch to the sandbox user
#                    and to no one else (docker/sandbox/)
#   dac_read_search  that one alone, kept through exec: the quota round, which walks
#                    each account's directory (looks, never changes)
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
[ $# -ge 2 ] || die "usage: as-portal.sh -|file|CAPABILITY COMMAND..."
caps=$1
shift
as=(setpriv --reuid="$PORTAL_USER" --regid="$PORTAL_USER" --init-groups)
case "$caps" in
-) exec "${as[@]}" --inh-caps=-all --bounding-set=-all --no-new-privs -- "$@" ;;
file) exec "${as[@]}" --inh-caps=-all --bounding-set=-all,+setuid,+setgid,+kill -- "$@" ;;
*)
  [[ "$caps" =~ ^[a-z_]+$ ]] || die "not a capability: $caps"
  exec "${as[@]}" --inh-caps="-all,+$caps" --ambient-caps="+$caps" \
    --bounding-set="-all,+$caps" --no-new-privs -- "$@"
  ;;
esac

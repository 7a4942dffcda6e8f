#!/usr/bin/env bash
# build.sh [PREFIX]: builds storagelab-sandbox (storagelab-sandbox.c, next to this) for
# the users of this host: it runs the Darshan log reader as DARSHAN_SANDBOX_USER
# (default storagelab-sandbox, made here if missing), and only the portal's group
# (STORAGELAB_USER's, default storagelab) may run it. Installed as
# PREFIX/libexec/storagelab-sandbox (default /usr/local), mode 0750, with the file
# capabilities CAP_SETUID, CAP_SETGID and CAP_KILL (to take the reader down with it),
# and no other. Rebuilt when its source or the
# sandbox's UID changes; a second run costs nothing. The image builds its own
# (docker/Dockerfile).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
[ "$(id -u)" = 0 ] || die "run as root: it gives a program capabilities"

PREFIX=${1:-/usr/local}
SANDBOX_USER=${DARSHAN_SANDBOX_USER:-storagelab-sandbox}
PORTAL_USER=${STORAGELAB_USER:-storagelab}
target=$PREFIX/libexec/storagelab-sandbox

apt_install gcc libc6-dev libcap2-bin
id -u "$SANDBOX_USER" >/dev/null 2>&1 ||
  useradd --system --user-group --no-create-home --home-dir /nonexistent \
    --shell /usr/sbin/nologin "$SANDBOX_USER"
uid=$(id -u "$SANDBOX_USER") gid=$(id -g "$SANDBOX_USER")
group=$(id -gn "$PORTAL_USER" 2>/dev/null) || die "no user $PORTAL_USER: create the portal's user first"

stamp="$(sha256sum "$here/storagelab-sandbox.c" | cut -d' ' -f1) $uid:$gid $group"
if [ "$(cat "$target.built" 2>/dev/null)" = "$stamp" ] && [ -x "$target" ] &&
  getcap "$target" | grep -q 'cap_kill,cap_setgid,cap_setuid=ep'; then
  exit 0
fi
mkdir -p "$PREFIX/libexec"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -O2 -Wall -Wextra -Werror -DSANDBOX_UID="$uid" -DSANDBOX_GID="$gid" \
  -o "$work/storagelab-sandbox" "$here/storagelab-sandbox.c"
install -o root -g "$group" -m 0750 "$work/storagelab-sandbox" "$target.new"
setcap cap_kill,cap_setuid,cap_setgid=ep "$target.new"
mv -f "$target.new" "$target"
echo "$stamp" >"$target.built"
say "built $target (runs readers as $SANDBOX_USER, UID $uid; group $group may run it)"

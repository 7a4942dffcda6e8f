#!/usr/bin/env bash
# base-image.sh [TAG]: the Debian 12 (bookworm) image our images start from (or the
# Debian release DEBIAN_SUITE names: trixie or forky for the multi-node cluster's), made
# from Debian's own packages with `debootstrap --variant=minbase` and imported into
# Docker (`docker import`). For a machine that reaches a Debian mirror but no
# container registry; where debian:bookworm-slim can be pulled, docker/image.sh uses
# that instead. Run it again to refresh the image with Debian's latest updates.
# Default TAG: storagelab/debian:bookworm. About 30 s and 120 MB.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

SUITE=${DEBIAN_SUITE:-bookworm}
TAG=${1:-storagelab/debian:$SUITE}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
DOCKER=${DOCKER:-/usr/bin/docker}
[ "$(id -u)" = 0 ] || die "run as root: debootstrap makes device nodes and files of every owner"
apt_install debootstrap

root=$(mktemp -d /var/tmp/storagelab-rootfs.XXXXXX)
trap 'rm -rf "$root"' EXIT
# Debian's testing, forky (Slurm 26.05), is newer than bookworm's debootstrap, which has
# no script of its own for it: unstable's script makes it. Testing has no stable
# -updates suite and its security suite is often empty: its main suite only.
script=() suites="$SUITE $SUITE-updates"
if [ "$SUITE" = forky ]; then
  script=(/usr/share/debootstrap/scripts/sid)
  suites=$SUITE
fi
say "debootstrap: Debian $SUITE (minbase) from $MIRROR"
if ! debootstrap --variant=minbase "$SUITE" "$root" "$MIRROR" "${script[@]}" >"$root.log" 2>&1; then
  tail -n 20 "$root.log" >&2
  rm -f "$root.log"
  die "debootstrap failed (the end of its log is above)"
fi
rm -f "$root.log"

# Debian's updates and security updates too, as in Debian's own images.
rm -f "$root/etc/apt/sources.list"
cat >"$root/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $MIRROR
Suites: $suites
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
[ "$SUITE" = forky ] || cat >>"$root/etc/apt/sources.list.d/debian.sources" <<EOF

Types: deb
URIs: $SECURITY_MIRROR
Suites: $SUITE-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
# A mirror that keeps a snapshot of testing (this project's build machines reach one)
# serves Release files past their Valid-Until, which apt refuses as expired: a forky
# image takes them. Stable suites keep the check.
[ "$SUITE" != forky ] || echo 'Acquire::Check-Valid-Until "false";' >"$root/etc/apt/apt.conf.d/90storagelab-snapshot"
# Images install only what they name, and keep no .deb, no translations and no
# package caches (70 MB after an `apt-get update`).
cat >"$root/etc/apt/apt.conf.d/90storagelab-image" <<'EOF'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
APT::Keep-Downloaded-Packages "false";
Acquire::Languages "none";
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
# No manuals, documentation or translated messages in images (copyright notices stay).
cat >"$root/etc/dpkg/dpkg.cfg.d/90storagelab-nodoc" <<'EOF'
path-exclude=/usr/share/doc/*
path-include=/usr/share/doc/*/copyright
path-exclude=/usr/share/man/*
path-exclude=/usr/share/info/*
path-exclude=/usr/share/lintian/*
path-exclude=/usr/share/locale/*
EOF
# A package's postinst starts no daemon during an image build (the chroot rule).
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 0755 "$root/usr/sbin/policy-rc.d"

# What the packages above would not have installed, and what Docker provides itself.
find "$root/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
find "$root/usr/share/man" "$root/usr/share/info" "$root/usr/share/locale" -mindepth 1 -delete 2>/dev/null || true
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb
rm -rf "$root"/var/log/* "$root"/tmp/* "$root"/var/tmp/*
rm -f "$root/etc/hostname" "$root/etc/resolv.conf"
: >"$root/etc/machine-id"

say "importing it as $TAG"
tar --numeric-owner --xattrs -C "$root" -c . |
  "$DOCKER" import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'CMD ["bash"]' \
    --message "Debian $SUITE (minbase) by debootstrap from $MIRROR" \
    - "$TAG" >/dev/null
say "$TAG: $("$DOCKER" image inspect --format '{{.Size}}' "$TAG" | awk '{printf "%.0f MB", $1 / 1e6}')"

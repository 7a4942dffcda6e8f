#!/usr/bin/env bash
# Builds IOR and mdtest (hpc/ior) with Debian's OpenMPI for the dev cluster's node,
# into $IOR_PREFIX (/opt/storagelab/ior), and links them into /usr/local/bin, where
# jobs find them (JOB_PATH). Once: a build whose source has the same SHA-256 is kept.
# The source is docker/vendor/ior-5fcf0ba.tar.gz, or IOR_SOURCE: a site's tarball or
# unpacked tree of hpc/ior (anything `./bootstrap && ./configure && make` builds).
# About 15 s on 2 cores; start.sh runs it before it starts slurmd.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"

[ "$(id -u)" = 0 ] || die "run as root: it installs packages and writes under /opt"

SOURCE=${IOR_SOURCE:-$here/../vendor/ior-5fcf0ba.tar.gz}
PREFIX=${IOR_PREFIX:-/opt/storagelab/ior}
LINK_DIR=${IOR_LINK_DIR:-/usr/local/bin}
[ -e "$SOURCE" ] || die "no IOR source at $SOURCE (IOR_SOURCE: a tarball or a directory)"

# Open MPI for the program and its launchers (mpirun; srun --mpi=pmix loads the same
# PMIx library), and what IOR's ./bootstrap and ./configure need.
apt_install openmpi-bin libopenmpi-dev gcc libc6-dev make autoconf automake pkg-config

# What the build is made of: the tarball's bytes, or every file of a tree.
if [ -d "$SOURCE" ]; then
  source_hash=$(cd "$SOURCE" && find . -type f -not -path './.git/*' -print0 | sort -z |
    xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
else
  source_hash=$(sha256sum "$SOURCE" | cut -d' ' -f1)
fi

link() {
  local tool
  for tool in ior mdtest; do
    # Never over a program that is not ours.
    if [ -e "$LINK_DIR/$tool" ] && [ "$(readlink "$LINK_DIR/$tool")" != "$PREFIX/bin/$tool" ]; then
      say "left $LINK_DIR/$tool alone: it is not a link to $PREFIX/bin/$tool"
      continue
    fi
    mkdir -p "$LINK_DIR"
    ln -sfn "$PREFIX/bin/$tool" "$LINK_DIR/$tool"
  done
}

built() {
  [ "$(cat "$PREFIX/.source.sha256" 2>/dev/null)" = "$source_hash" ] &&
    [ -x "$PREFIX/bin/ior" ] && [ -x "$PREFIX/bin/mdtest" ]
}

# Two checkouts starting the cluster at once build it once.
mkdir -p "$RUN_DIR" "$LOG_DIR"
exec 9>"$RUN_DIR/ior-build.lock"
flock 9
if built; then
  link
  exit 0
fi

say "building IOR and mdtest from $SOURCE into $PREFIX"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/src"
if [ -d "$SOURCE" ]; then
  cp -a "$SOURCE/." "$work/src/"
else
  tar -xzf "$SOURCE" -C "$work/src" --strip-components=1
fi
# && between the steps: bash ignores set -e in a subshell whose status is tested.
(
  cd "$work/src" &&
    ./bootstrap &&
    ./configure --prefix="$PREFIX" CC=mpicc &&
    make -j"$(nproc)" &&
    make install DESTDIR="$work/stage"
) >"$LOG_DIR/ior-build.log" 2>&1 || die "building IOR failed (log: $LOG_DIR/ior-build.log)"
echo "$source_hash" >"$work/stage$PREFIX/.source.sha256"
# The new build replaces the old one whole; jobs running the old binaries keep them.
rm -rf "$PREFIX.old"
[ -e "$PREFIX" ] && mv "$PREFIX" "$PREFIX.old"
mkdir -p "$(dirname "$PREFIX")"
mv "$work/stage$PREFIX" "$PREFIX"
rm -rf "$PREFIX.old"
chmod -R a+rX "$PREFIX"
link
say "built IOR $(sed -n 's/^Version: *//p' "$work/src/META" 2>/dev/null) in $PREFIX"

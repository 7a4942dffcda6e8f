#!/usr/bin/env bash
# Builds darshan-runtime (without MPI) and darshan-util from the vendored source
# (docker/vendor/darshan-45bcba8.tar.gz, or DARSHAN_SOURCE: another tarball) into
# $DARSHAN_PREFIX (/opt/storagelab/darshan): libdarshan.so records the POSIX I/O of any
# program run with LD_PRELOAD, and writes its log into the directory DARSHAN_LOGPATH
# names (no Slurm job needed; the job id is the process id). The dev cluster's start
# (docker/slurm/start.sh) builds it: every lab run records its own I/O with it
# (RUN_DARSHAN_RUNTIME); make-logs.sh uses it to make the small logs of
# tests/jobio/logs/. Once: a build of the same source is kept. About a minute on 2 cores.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"

[ "$(id -u)" = 0 ] || die "run as root: it installs packages and writes under /opt"

SOURCE=${DARSHAN_SOURCE:-$here/../vendor/darshan-45bcba8.tar.gz}
PREFIX=${DARSHAN_PREFIX:-/opt/storagelab/darshan}
[ -e "$SOURCE" ] || die "no Darshan source at $SOURCE (DARSHAN_SOURCE: its tarball)"

# bzip2: the build unpacks a bundled uthash .tar.bz2 (a minimal Debian has no bzip2).
apt_install gcc libc6-dev make autoconf automake libtool pkg-config zlib1g-dev bzip2

source_hash=$(sha256sum "$SOURCE" | cut -d' ' -f1)
if [ "$(cat "$PREFIX/.source.sha256" 2>/dev/null)" = "$source_hash" ] &&
  [ -e "$PREFIX/lib/libdarshan.so" ]; then
  exit 0
fi

say "building darshan-runtime from $SOURCE into $PREFIX"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar xzf "$SOURCE" -C "$work"
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -1)
log=$work/build.log
(
  # Each step only after the one before it worked: in a subshell whose status is
  # tested (`|| ...` below), bash ignores set -e, and a failed configure went on to a
  # make install that failed with a misleading last line.
  cd "$src" &&
    ./prepare.sh &&
    mkdir build && cd build &&
    # --without-mpi: plain programs (fio, dd) are recorded; the job id comes from no
    # variable (NONE: the process id), the log directory from DARSHAN_LOGPATH.
    ../configure --prefix="$PREFIX" --without-mpi --enable-apmpi-mod=no \
      --with-log-path-by-env=DARSHAN_LOGPATH --with-jobid-env=NONE CC=gcc &&
    make -j"$(nproc)" &&
    make install
) >"$log" 2>&1 || {
  tail -30 "$log" >&2
  die "building darshan failed (the end of its log is above)"
}
echo "$source_hash" >"$PREFIX/.source.sha256"
say "built darshan into $PREFIX"

#!/usr/bin/env bash
# Makes the Darshan logs of tests/jobio/logs/ for real: fio runs under LD_PRELOAD of
# the libdarshan.so that build.sh made, as a plain program (no Slurm, no MPI), and
# Darshan writes each run's log. Run as root (build.sh installs packages); the logs
# record uid 0 and the job id of the process. About 30 s, most of it the 2 GiB write.
#   docker/darshan/make-logs.sh [OUT_DIR]   (default: tests/jobio/logs)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
PREFIX=${DARSHAN_PREFIX:-/opt/storagelab/darshan}
OUT=${1:-$here/../../tests/jobio/logs}

"$here/build.sh"
command -v fio >/dev/null || apt_install fio
mkdir -p "$OUT"
# On the machine's disk: Darshan leaves out /var, /dev, /proc and other system paths.
data=$(mktemp -d /tmp/darshan-data.XXXXXX)
logs=$(mktemp -d /tmp/darshan-logs.XXXXXX)
trap 'rm -rf "$data" "$logs"' EXIT

record() {  # NAME fio-options...: one fio run recorded as OUT/NAME.darshan
  local name=$1
  shift
  rm -f "$logs"/*
  DARSHAN_ENABLE_NONMPI=1 DARSHAN_LOGPATH="$logs" LD_PRELOAD="$PREFIX/lib/libdarshan.so" \
    fio --thread --name="$name" --directory="$data" --ioengine=psync --end_fsync=1 \
    --output=/dev/null "$@"
  mv "$logs"/*.darshan "$OUT/$name.darshan"
  chmod 644 "$OUT/$name.darshan"
  rm -rf "${data:?}"/*
  say "made $OUT/$name.darshan ($(stat -c %s "$OUT/$name.darshan") bytes)"
}

# Heavy 4 KiB random writes to one 64 MiB file: 16,384 writes, each block once (2a's shape).
record random-4k --rw=randwrite --bs=4k --size=64m --randrepeat=1
# A large sequential write in 1 MiB blocks: 2 GiB to one file (1a's shape).
record sequential-1m --rw=write --bs=1m --size=2g
# Many small files: 1,000 files of 16 KiB (Darshan keeps 1,024 records a module), each created, written and closed in turn (3's shape).
record small-files --rw=write --bs=16k --nrfiles=1000 --filesize=16k --openfiles=1 \
  --file_service_type=sequential --create_on_open=1
# A job that did no I/O Darshan counts: two files created (opened) and closed, never
# written or read. Replay my job refuses it.
rm -f "$logs"/*
DARSHAN_ENABLE_NONMPI=1 DARSHAN_LOGPATH="$logs" LD_PRELOAD="$PREFIX/lib/libdarshan.so" \
  touch "$data/a" "$data/b"
mv "$logs"/*.darshan "$OUT/no-io.darshan"
chmod 644 "$OUT/no-io.darshan"
say "made $OUT/no-io.darshan"

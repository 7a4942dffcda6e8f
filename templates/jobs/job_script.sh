{% autoescape off %}#!/bin/bash
# Storage Lab benchmark run {{ run_key }}
#   engine: {{ engine }}, target: {{ target }}, {{ description }}
# It works in a directory of its own on the target, removes it at the end (also
# when it fails or is cancelled) and sends the benchmark's output to the portal.
# Its output file is written by this script, once the directory is known to be the
# user's alone (Slurm sends the job's output nowhere: it would open a name in the
# directory before anything was checked, and follow a link another user planted there).
# Once the portal has the output, that file goes too: nothing piles up on the target.
# It stays when the output could not be sent: staff attach it from there.
set -u
umask 077
target_dir={{ target_dir }}
run_dir={{ run_dir }}
output={{ output_stem }}"${SLURM_JOB_ID:-}.out"
say() { echo "Storage Lab: $*" >&2; }

# The run's secret goes into a file only this user reads, before anything else
# runs: no command line (which 'ps' shows every user) ever holds it, and the
# benchmark's processes do not inherit it.
secret="" result="" made="" darshan_dir=""
cleanup() {
  rm -f -- "$secret" "$result"
  [ -z "$made" ] || rm -rf -- "$run_dir"
  [ -z "$darshan_dir" ] || rm -rf -- "$darshan_dir"
}
trap cleanup EXIT
secret=$(mktemp) || exit 1
printf 'X-Storagelab-Token: %s\n' "$STORAGELAB_RESULT_TOKEN" >"$secret"
unset STORAGELAB_RESULT_TOKEN
result=$(mktemp) || exit 1
trap 'exit 143' TERM INT

{% if target_variable %}# The target is the directory ${{ target_variable }} names on this node.
if [ -z {{ target_variable_value }} ]; then
  say "\${{ target_variable }} is not set on $(hostname); nothing was run"
  exit 78
fi
{% endif %}# The target directory must be this user's alone: in one another user owns or may
# write to (a target under a shared parent such as /tmp), that user could swap the
# run's directory for a link while the benchmark writes, or plant a link named as a
# file this job writes.
if [ -L "$target_dir" ] || [ ! -d "$target_dir" ] || [ ! -O "$target_dir" ] ||
  [ -n "$(find "$target_dir" -maxdepth 0 -perm /022)" ]; then
  say "$target_dir is not a directory of yours that only you may write to; nothing was run"
  exit 78
fi
# And every directory above it, as the filesystem has them (a site's links resolved):
# root's or this user's, and writable by no one else unless sticky (as /tmp is, where
# nobody may rename another's entry). One that another user may write to would let
# them rename this user's directory away and put one of theirs in its place.
physical=$(cd -P -- "$target_dir" && pwd) || exit 78
parent=$physical
while [ "$parent" != / ]; do
  parent=$(dirname -- "$parent")
  if [ -L "$parent" ] || { [ "$(stat -c %u -- "$parent")" != 0 ] && [ ! -O "$parent" ]; } ||
    [ -n "$(find "$parent" -maxdepth 0 -perm /022 ! -perm -1000)" ]; then
    say "$parent, above $target_dir, may be written to by other users; nothing was run"
    exit 78
  fi
done
# Room for the run's files, each an inode of a filesystem other users share: one with a
# fixed number of them (ext4, XFS, a Lustre metadata target) that has fewer free than
# this run makes at once is not filled up for them; nothing runs (the portal reads the
# exit status as "no room"). One that makes inodes as it needs them (btrfs) counts
# none: no check. Checked here, on the node, as the files are about to be made.
read -r inodes free < <(stat -f -c '%c %d' -- "$target_dir") || inodes=0
if [ "${inodes:-0}" -gt 0 ] && [ "${free:-0}" -lt {{ files_needed }} ]; then
  say "$target_dir has ${free:-0} free inodes, fewer than the {{ files_needed }} this run needs; nothing was run"
  exit 73
fi
# The job's output file, from here on: in a directory no other user can name a file in.
exec >"$output" 2>&1
{% if stored_by == "btrfs" %}# The target compresses: btrfs counts what a subvolume stored, so the run's directory
# is one of its own (btrfs_space.py).
btrfs_space() {
  python3 -I - "$@" <<'PY'
{% include "jobs/btrfs_space.py" %}PY
}
# A fresh subvolume, made here (mode 700): an existing path is never reused.
if [ -e "$run_dir" ] || [ -L "$run_dir" ]; then
  say "$run_dir exists already; nothing was run"
  exit 78
fi
if ! btrfs_space make "$run_dir"; then
  say "$run_dir could not be made as a btrfs subvolume: $target_dir is not on btrfs; nothing was run"
  exit 79
fi
{% else %}# A fresh directory, made here (mode 700): an existing path is never reused.
if ! mkdir -- "$run_dir"; then
  say "$run_dir exists already; nothing was run"
  exit 78
fi
{% endif %}
made=1
cd -- "$run_dir" || exit 1
# The job has no HOME of its own (no one's settings are read); Open MPI 5 will not
# start without one, so the benchmark gets its fresh, empty run directory as HOME.
export HOME="$run_dir"
echo "Storage Lab: running {{ engine }} in $run_dir on $(hostname)"
{% if darshan %}# Darshan records the benchmark's own I/O, one log per process, into a private
# directory (on a shared target, where ranks on every node reach it): the files in the
# run's directory only, by the benchmark only (its configuration leaves out every other
# name and program). The logs are written as each process ends, after the figure.
{% if target_variable %}# Its configuration names the run's directory as a POSIX regular expression: a
# plain path only, each "." and "-" in brackets (none: nothing is recorded).
darshan_include() {
  case "$run_dir" in [!/]* | *[!A-Za-z0-9/._-]*) return 0 ;; esac
  printf 'NAME_INCLUDE ^%s/ POSIX' "$(printf '%s' "$run_dir" | sed 's/[.-]/[&]/g')"
}
{% endif %}darshan_dir=$(mktemp -d{% if darshan_on_target %} -p "$target_dir" .storagelab-darshan-XXXXXX{% endif %}) &&
  mkdir -- "$darshan_dir/logs" || exit 1
printf '%s\n' 'NAME_EXCLUDE .* POSIX' {{ darshan_include }} 'APP_EXCLUDE .*' {{ darshan_app }} \
  >"$darshan_dir/config"
LD_PRELOAD={{ darshan_runtime }} DARSHAN_ENABLE_NONMPI=1 DARSHAN_LOGPATH="$darshan_dir/logs" \
  DARSHAN_CONFIG_PATH="$darshan_dir/config" {{ command }} >"$result" 2>&1
{% else %}{{ command }} >"$result" 2>&1
{% endif %}status=$?
{% if stored_by %}# The target compresses: what the run's files hold, and the space they took on it,
# after the figure, as a line the portal reads with the output (jobs/stored.py).
if sync -f -- "$run_dir"; then
{% if stored_by == "btrfs" %}  space=$(btrfs_space space "$run_dir") && echo "Storage Lab: $space" >>"$result"
{% else %}  find "$run_dir" -type f -printf '%s %b\n' |
    awk '{ held += $1; took += $2 * 512 } END { printf "Storage Lab: stored %d of %d bytes\n", took, held }' >>"$result"
{% endif %}fi
{% endif %}# The output, whole, in the job's output file too, between lines the portal finds
# again (`manage.py attach_result`) if its post never arrives.
echo "Storage Lab: the output of {{ engine }} follows (exit status $status)"
cat -- "$result"
echo "Storage Lab: end of the output of {{ engine }}"

# Send the output back, cut to the size the portal accepts, which takes it once; tried
# for {{ retry_seconds }} s while the portal does not answer (post_back, below).
truncate --size="<{{ max_bytes }}" -- "$result"
{% include "jobs/post_back.sh" %}delivered=""
if post_back {{ result_url }} "$result" {{ retry_seconds }} result -H "X-Benchmark-Exit: $status" \
  -H "Content-Type: text/plain; charset=utf-8"; then
  delivered=1
else
  say "the output is above, in this file"
fi
{% if darshan %}
# Then the run's Darshan logs, one after the other with their sizes (or why there are
# none), in one post the portal takes once; tried for {{ darshan_post_seconds }} s: the figure is home.
send_logs() {
  local logs=("$darshan_dir"/logs/*.darshan) bundle="$darshan_dir/bundle" missing="" sizes=""
  if [ ! -e "${logs[0]}" ]; then
    missing=none
  elif [ "${#logs[@]}" -gt {{ darshan_logs_max }} ]; then
    missing=many
  else
    sizes=$(stat -c %s -- "${logs[@]}" | paste -sd, -)
    cat -- "${logs[@]}" >"$bundle"
    [ "$(stat -c %s -- "$bundle")" -le {{ darshan_max_bytes }} ] || missing=big
  fi
  if [ -n "$missing" ]; then
    post_back {{ logs_url }} /dev/null {{ darshan_post_seconds }} "run's Darshan logs" -H "X-Darshan-Missing: $missing" \
      -H "Content-Type: application/octet-stream"
  else
    post_back {{ logs_url }} "$bundle" {{ darshan_post_seconds }} "run's Darshan logs" -H "X-Darshan-Sizes: $sizes" \
      -H "Content-Type: application/octet-stream"
  fi
}
[ -z "$delivered" ] || send_logs
{% endif %}
# The portal has the output: this file (this script's own output, still open) is no
# longer needed. Only a regular file of this user's, never a link.
if [ -n "$delivered" ] && [ -f "$output" ] && [ ! -L "$output" ] && [ -O "$output" ]; then
  rm -f -- "$output"
fi
exit $status
{% endautoescape %}

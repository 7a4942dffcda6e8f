{% autoescape off %}#!/bin/bash
# Storage Lab benchmark run {{ run_key }}
#   engine: {{ engine }}, target: {{ target }}, {{ description }}
# It works in a directory of its own on the target, removes it at the end (also
# when it fails or is cancelled) and sends the benchmark's output to the portal.
set -u
umask 077
target_dir={{ target_dir }}
run_dir={{ run_dir }}
say() { echo "Storage Lab: $*" >&2; }

# The run's secret goes into a file only this user reads, before anything else
# runs: no command line (which 'ps' shows every user) ever holds it, and the
# benchmark's processes do not inherit it.
secret="" result="" made=""
cleanup() {
  rm -f -- "$secret" "$result"
  [ -z "$made" ] || rm -rf -- "$run_dir"
}
trap cleanup EXIT
secret=$(mktemp) || exit 1
printf 'X-Storagelab-Token: %s\n' "$STORAGELAB_RESULT_TOKEN" >"$secret"
unset STORAGELAB_RESULT_TOKEN
result=$(mktemp) || exit 1
trap 'exit 143' TERM INT

# The target directory must be this user's alone: in one another user owns or may
# write to (a target under a shared parent such as /tmp), that user could swap the
# run's directory for a link while the benchmark writes.
if [ -L "$target_dir" ] || [ ! -d "$target_dir" ] || [ ! -O "$target_dir" ] ||
  [ -n "$(find "$target_dir" -maxdepth 0 -perm /022)" ]; then
  say "$target_dir is not a directory of yours that only you may write to; nothing was run"
  exit 78
fi
# A fresh directory, made here (mode 700): an existing path is never reused.
if ! mkdir -- "$run_dir"; then
  say "$run_dir exists already; nothing was run"
  exit 78
fi
made=1
cd -- "$run_dir" || exit 1
echo "Storage Lab: running {{ engine }} in $run_dir on $(hostname)"
{{ command }} >"$result" 2>&1
status=$?
cat -- "$result"

# Send the output back: retried, capped, accepted once by the portal. -q: no
# .curlrc of anyone's is read.
head -c {{ max_bytes }} -- "$result" |
  curl -q --silent --show-error --fail --retry 5 --retry-delay 1 --retry-all-errors \
    --max-time 30 -H @"$secret" \
    -H "X-Benchmark-Exit: $status" -H "Content-Type: text/plain; charset=utf-8" \
    --data-binary @- {{ result_url }} ||
  say "could not send the result to the portal"
exit $status
{% endautoescape %}

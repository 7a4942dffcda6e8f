{% autoescape off %}#!/bin/bash
# Storage Lab benchmark run {{ run_key }}
#   engine: {{ engine }}, target: {{ target }}, {{ description }}
# It works in a directory of its own on the target, removes it at the end (also
# when it fails or is cancelled) and sends the benchmark's output to the portal.
set -u
run_dir={{ run_dir }}
result=$(mktemp) || exit 1
cleanup() { rm -rf -- "$run_dir" "$result"; }
trap cleanup EXIT
trap 'exit 143' TERM INT

mkdir -p -- "$run_dir" && cd -- "$run_dir" || exit 1
echo "Storage Lab: running {{ engine }} in $run_dir on $(hostname)"
{{ command }} >"$result" 2>&1
status=$?
cat -- "$result"

# Send the output back: retried, capped, accepted once by the portal.
head -c {{ max_bytes }} -- "$result" |
  curl --silent --show-error --fail --retry 5 --retry-delay 1 --retry-all-errors \
    --max-time 30 -H "X-Storagelab-Token: $STORAGELAB_RESULT_TOKEN" \
    -H "X-Benchmark-Exit: $status" -H "Content-Type: text/plain; charset=utf-8" \
    --data-binary @- {{ result_url }} ||
  echo "Storage Lab: could not send the result to the portal" >&2
exit $status
{% endautoescape %}

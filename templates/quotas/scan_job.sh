{% autoescape off %}#!/bin/bash
# Storage Lab storage {{ kind }} {{ key }}, as {{ user }}.
{% if kind == "scan" %}# It reads the names and inodes below the user's directories (no file's content, no
# link followed) and sends what fills them, and what the purge will take, to the portal.
{% else %}# It removes what the site's purge policy says from the user's directories on the
# targets the portal purges itself, and tells the portal how much it removed.
{% endif %}# It writes no file on any target; its output goes nowhere (Slurm opens no file).
set -u
umask 077
say() { echo "Storage Lab: $*" >&2; }

# The secret goes into a file only this user reads, before anything else runs.
secret="" result="" said=""
cleanup() { rm -f -- "$secret" "$result" "$said"; }
trap cleanup EXIT
secret=$(mktemp) || exit 1
printf 'X-Storagelab-Token: %s\n' "$STORAGELAB_RESULT_TOKEN" >"$secret"
unset STORAGELAB_RESULT_TOKEN
result=$(mktemp) && said=$(mktemp) || exit 1
trap 'exit 143' TERM INT

# The program (treewalk.py, then scanner.py) walks each directory by its descriptors:
# no link followed, no other filesystem entered but the btrfs subvolumes of its own; a
# purge removes only regular files, from a directory that is this user's own.
python3 -I -S - {{ spec }} >"$result" 2>"$said" <<'STORAGELAB_PROGRAM'
{{ program }}
STORAGELAB_PROGRAM
status=$?
# The answer, or (the program failed) the last of what it said, to the portal, tried
# again for {{ retry_seconds }} s while the portal does not answer; a refusal is final.
[ "$status" = 0 ] || tail -c 400 -- "$said" >"$result"
{% include "jobs/post_back.sh" %}post_back {{ result_url }} "$result" {{ retry_seconds }} answer -H "X-Scan-Exit: $status" \
  -H "Content-Type: application/json"
exit "$status"
{% endautoescape %}

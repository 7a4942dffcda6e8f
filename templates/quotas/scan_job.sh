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
give_up=$((SECONDS + {{ retry_seconds }})) pause=1
while :; do
  code=$(curl -q --silent --show-error --max-time 30 --output /dev/null --write-out '%{http_code}' \
    -H @"$secret" -H "X-Scan-Exit: $status" -H "Content-Type: application/json" \
    --data-binary @"$result" {{ result_url }}) || true
  case "$code" in
  2?? | 409) break ;;
  4??) [ "$code" = 408 ] || [ "$code" = 429 ] || { say "the portal refused the answer (HTTP $code)"; break; } ;;
  esac
  if [ "$SECONDS" -ge "$give_up" ]; then
    say "could not send the answer to the portal for {{ retry_seconds }} s (last: ${code:-none})"
    break
  fi
  sleep "$pause"
  pause=$((pause < 16 ? pause * 2 : 30))
done
exit "$status"
{% endautoescape %}

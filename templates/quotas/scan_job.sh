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

{% if kind == "scan" %}python3 -I -S - {{ spec }} >"$result" 2>"$said" <<'STORAGELAB_SCANNER'
{{ scanner }}
STORAGELAB_SCANNER
status=$?
{% else %}# One target at a time: only a directory that is this user's own and no link; find
# stays on its filesystem (-xdev), follows no link and removes regular files only.
purge() {
  local key=$1 dir=$2 minutes=$3 time=$4
  shift 4
  local n=0 b=0 skip=()
  for pattern in "$@"; do skip+=(! -path "$dir/$pattern"); done
  if [ -d "$dir" ] && [ ! -L "$dir" ] && [ -O "$dir" ]; then
    read -r n b < <(find "$dir" -xdev -type f "-${time}min" "+$minutes" "${skip[@]}" \
      -printf '%b\n' -delete 2>>"$said" | awk '{ n++; b += $1 * 512 } END { printf "%d %.0f\n", n, b }')
  fi
  printf '"%s": {"files": %d, "bytes": %s}' "$key" "$n" "$b"
}
{
  printf '{"removed": {'
{% for target in purges %}  {% if not forloop.first %}printf ', '
  {% endif %}purge {{ target.key }} {{ target.dir }} {{ target.minutes }} {{ target.time }}{% for pattern in target.exempt %} {{ pattern }}{% endfor %}
{% endfor %}  printf '}}\n'
} >"$result"
status=0
{% endif %}
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

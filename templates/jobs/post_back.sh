# post_back URL FILE SECONDS WHAT [CURL OPTIONS...]: sends FILE to the portal with the
# job's secret (the header file $secret), and returns 0 once the portal has it. The one
# way every job of the portal posts back (templates/jobs/post_back.sh, included by each
# job script). A portal that does not answer (a restart, a deploy, a proxy's blip), or
# answers 408, 429 or 5xx, is asked again, with pauses growing to 30 s, for SECONDS; a
# refusal is final: a wrong or expired secret (403), a job that is gone (404), too
# large (413). 409: the portal has it already. -q: no .curlrc of anyone's is read.
post_back() {
  local url=$1 body=$2 seconds=$3 what=$4 code="" pause=1
  shift 4
  local give_up=$((SECONDS + seconds))
  while :; do
    code=$(curl -q --silent --show-error --max-time 30 --output /dev/null --write-out '%{http_code}' \
      -H @"$secret" "$@" --data-binary @"$body" "$url") || true
    case "$code" in
    2??) return 0 ;;
    409) say "the portal had this $what already"; return 0 ;;
    4??) [ "$code" = 408 ] || [ "$code" = 429 ] || {
      say "the portal refused the $what (HTTP $code)"
      return 1
    } ;;
    esac
    if [ "$SECONDS" -ge "$give_up" ]; then
      say "could not send the $what to the portal for $seconds s (last answer: ${code:-none})"
      return 1
    fi
    sleep "$pause"
    pause=$((pause < 16 ? pause * 2 : 30))
  done
}

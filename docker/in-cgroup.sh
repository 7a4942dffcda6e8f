#!/usr/bin/env bash
# in-cgroup.sh DIR COMMAND...: runs COMMAND in the cgroup DIR (all it starts stays
# there), or as it is when DIR is empty. It becomes COMMAND (exec): a pid recorded for
# it is COMMAND's.
group=$1
shift
if [ -n "$group" ]; then
  echo $$ >"$group/cgroup.procs" || exit 1
fi
exec "$@"

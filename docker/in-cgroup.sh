#!/usr/bin/env bash
# in-cgroup.sh DIR COMMAND...: runs COMMAND in the cgroup DIR (all it starts stays
# there), or as it is when DIR is empty. It becomes COMMAND (exec): a pid recorded for
# it is COMMAND's. (With cgroup v1, also the cpuacct group of the same name:
# join_cpu_group in docker/lib.sh.)
. "$(dirname "$0")/lib.sh"
group=$1
shift
if [ -n "$group" ]; then
  join_cpu_group "$group" $$ || exit 1
fi
exec "$@"

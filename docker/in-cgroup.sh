#!/usr/bin/env bash
# in-cgroup.sh DIR COMMAND...: runs COMMAND in the cgroup DIR (all it starts stays
# there), or as it is when DIR is empty. It becomes COMMAND (exec): a pid recorded for
# it is COMMAND's. With cgroup v1, it also joins the same-named group of the cpuacct
# hierarchy where there is one, so that the bench can tell what the group used
# (bench/pressure.py).
group=$1
shift
if [ -n "$group" ]; then
  echo $$ >"$group/cgroup.procs" || exit 1
  acct=/sys/fs/cgroup/cpuacct/${group#/sys/fs/cgroup/cpu/}
  if [ "$group" != "${group#/sys/fs/cgroup/cpu/}" ] && [ -d "$acct" ]; then
    echo $$ >"$acct/cgroup.procs" 2>/dev/null || true
  fi
fi
exec "$@"

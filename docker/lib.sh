# Shell helpers shared by the dev scripts: where state lives and how a daemon is
# known to be alive. Sourced, not run.

# One dev cluster per machine, whichever checkout starts it: fixed system paths.
RUN_DIR=${STORAGELAB_RUN_DIR:-/run/storagelab}
STATE_DIR=${STORAGELAB_STATE_DIR:-/var/lib/storagelab}
LOG_DIR=${STORAGELAB_LOG_DIR:-/var/log/storagelab}

# The portal's own user (and group): the web server and the workers run as it, never as
# root (docker/dev/up.sh makes it). The image has its own (docker/Dockerfile).
PORTAL_USER=${STORAGELAB_USER:-storagelab}

say() { printf '[storagelab] %s\n' "$*"; }
die() { printf '[storagelab] error: %s\n' "$*" >&2; exit 1; }

# alive PIDFILE: the pid in PIDFILE runs and is not a zombie (PID 1 here reaps
# late, so kill -0 alone would call a dead daemon alive).
alive() {
  local pid
  [ -s "$1" ] || return 1
  pid=$(cat "$1" 2>/dev/null) || return 1
  [ -n "$pid" ] && [ -r "/proc/$pid/status" ] || return 1
  ! grep -q '^State:[[:space:]]*Z' "/proc/$pid/status"
}

# shared_root DIR: DIR, a directory the cluster's nodes also see, made a mount point of
# its own that shares what is mounted below it later (a new account's tmpfs) with the
# nodes' copies of it (docker/cluster/start.sh). What is mounted there already comes
# along (a recursive bind). Idempotent.
shared_root() {
  mountpoint -q "$1" || mount --rbind "$1" "$1"
  mount --make-rshared "$1"
}

# cluster_label, cluster_network: the label of the dev cluster's containers and the name
# of its network (docker/cluster/start.sh). The dev site's cluster's label is
# storagelab.cluster=1, which scripts and tests look for; a second cluster beside it
# (CLUSTER_PREFIX=h7-) carries its prefix instead, so that none of them counts its
# containers as the first's (a start.sh that found ten would replace the first).
cluster_label() { echo "storagelab.cluster=${CLUSTER_PREFIX:-1}"; }
cluster_network() { echo "${CLUSTER_PREFIX:-}storagelab-cluster"; }

# cluster_gateway: this host's address on the dev cluster's network, which its nodes
# reach (docker/cluster/start.sh makes the network).
cluster_gateway() {
  /usr/bin/docker network inspect -f '{{(index .IPAM.Config 0).Gateway}}' "$(cluster_network)"
}

# stop_pidfile NAME PIDFILE: TERM the process, wait up to 10 s, then KILL.
stop_pidfile() {
  local name=$1 file=$2 pid i
  if alive "$file"; then
    pid=$(cat "$file")
    kill "$pid" 2>/dev/null || true
    for i in $(seq 50); do alive "$file" || break; sleep 0.2; done
    alive "$file" && kill -9 "$pid" 2>/dev/null || true
    say "stopped $name (pid $pid)"
  fi
  rm -f "$file"
}

# reachable_by USER PATH: USER may go down every directory to PATH (and read it). Where
# a parent is closed to others (a checkout under /root, 0700), USER alone is let through
# it (an ACL entry: search, not read), and this says so.
reachable_by() {
  local user=$1 path=$2 dir
  setpriv --reuid="$user" --regid="$user" --init-groups test -r "$path" 2>/dev/null && return 0
  apt_install acl
  dir=$path
  while [ "$dir" != / ]; do
    dir=$(dirname "$dir")
    if ! setpriv --reuid="$user" --regid="$user" --init-groups test -x "$dir" 2>/dev/null; then
      setfacl -m "u:$user:x" "$dir"
      say "let $user through $dir (ACL u:$user:x), to reach $path"
    fi
  done
  setpriv --reuid="$user" --regid="$user" --init-groups test -r "$path" ||
    die "$user cannot read $path: make it readable by others (chmod o+rX)"
}

# wait_for DESCRIPTION SECONDS COMMAND...: retry COMMAND until it succeeds.
wait_for() {
  local what=$1 seconds=$2 i
  shift 2
  for i in $(seq $((seconds * 5))); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  die "$what did not come up within ${seconds}s (logs in $LOG_DIR)"
}

# apt_install PACKAGE...: install what is missing, nothing else.
apt_install() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  say "installing ${missing[*]}"
  if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*_Packages' -mmin -1440 2>/dev/null | head -1)" ]; then
    apt-get update -q >/dev/null
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
}

# cluster_cpu_group: the directory of a CPU cgroup with a small share (1/8 of a normal
# one), created once; nothing where the machine has no cpu controller to use (cgroup
# v1's cpu hierarchy, or v2 with cpu enabled at its root) or may not create one.
cluster_cpu_group() {
  local v1=/sys/fs/cgroup/cpu v2=/sys/fs/cgroup name=storagelab-cluster
  if [ -f "$v1/cpu.shares" ]; then
    mkdir -p "$v1/$name" 2>/dev/null && echo 128 >"$v1/$name/cpu.shares" 2>/dev/null &&
      echo "$v1/$name"
    mkdir -p "/sys/fs/cgroup/cpuacct/$name" 2>/dev/null # what it used (join_cpu_group)
  elif grep -qw cpu "$v2/cgroup.subtree_control" 2>/dev/null; then
    mkdir -p "$v2/$name" 2>/dev/null && echo 12 >"$v2/$name/cpu.weight" 2>/dev/null &&
      echo "$v2/$name"
  fi
  return 0
}

# join_cpu_group DIR PID: moves PID into the CPU cgroup DIR (cluster_cpu_group,
# idle_cpu_group) and, with cgroup v1, into the cpuacct group of the same name where
# there is one, so that the bench can tell what the group used (bench/pressure.py).
join_cpu_group() {
  echo "$2" >"$1/cgroup.procs" || return 1
  local acct=/sys/fs/cgroup/cpuacct/${1#/sys/fs/cgroup/cpu/}
  if [ "$1" != "${1#/sys/fs/cgroup/cpu/}" ] && [ -d "$acct" ]; then
    echo "$2" >"$acct/cgroup.procs" 2>/dev/null || true
  fi
}

# idle_cpu_group: the directory of a CPU cgroup whose tasks run only when no other task
# wants the CPU (cpu.idle, Linux 5.15+) and yield it to any task that wakes, created
# once; nothing where the machine has no such group to give.
idle_cpu_group() {
  local v1=/sys/fs/cgroup/cpu v2=/sys/fs/cgroup name=storagelab-nodes dir
  if [ -f "$v1/cpu.shares" ]; then
    dir=$v1/$name
    mkdir -p "/sys/fs/cgroup/cpuacct/$name" 2>/dev/null # what it used (join_cpu_group)
  elif grep -qw cpu "$v2/cgroup.subtree_control" 2>/dev/null; then
    dir=$v2/$name
  else
    return 0
  fi
  mkdir -p "$dir" 2>/dev/null && echo 1 >"$dir/cpu.idle" 2>/dev/null && echo "$dir"
  return 0
}

# spawn PIDFILE LOGFILE COMMAND...: start a daemon in a process group of its own
# (job control on), so a Ctrl-C or a killed test run does not take it down, and
# record its real pid. It keeps no descriptor of its starter open beyond its own
# three: up.sh reports on fd 3, and a daemon holding that pipe would keep whoever
# reads it waiting for as long as the daemon lives.
spawn() {
  local pidfile=$1 logfile=$2
  shift 2
  (
    set -m
    "$@" >>"$logfile" 2>&1 </dev/null 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
    echo $! >"$pidfile"
  )
}

# start_bg NAME COMMAND...: run COMMAND in the background as service NAME, its pid
# in $RUN_DIR/NAME.pid and its output in $LOG_DIR/NAME.log, unless it already runs
# with this checkout's code and the same PORTAL_CALLBACK_URL (one started otherwise is
# replaced: a worker would write job scripts that post to a web server gone).
# Returns 0 when it started one, 1 when it was already running, 2 when it replaced
# one that ran other code: that one was found running, so whoever stops "what this
# run started" must leave its replacement running.
start_bg() {
  local name=$1 root=${STORAGELAB_ROOT:-$PWD} code was=0
  shift
  # Which code it runs: the checkout, and its newest Python file.
  code="$root $(find "$root" -name '*.py' -not -path '*/.venv/*' -printf '%T@\n' | sort -n | tail -n 1)"
  code="$code ${PORTAL_CALLBACK_URL:-}"
  if alive "$RUN_DIR/$name.pid"; then
    [ "$(cat "$RUN_DIR/$name.code" 2>/dev/null)" = "$code" ] && return 1
    was=2
  fi
  stop_pidfile "$name" "$RUN_DIR/$name.pid"
  spawn "$RUN_DIR/$name.pid" "$LOG_DIR/$name.log" "$@"
  echo "$code" >"$RUN_DIR/$name.code"
  if [ "$was" = 2 ]; then
    say "restarted $name, found on other code or callback address (pid $(cat "$RUN_DIR/$name.pid"))"
  else
    say "started $name (pid $(cat "$RUN_DIR/$name.pid"))"
  fi
  return "$was"
}

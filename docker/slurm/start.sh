#!/usr/bin/env bash
# Brings up the single-node dev cluster from Debian's packages: munge, slurmctld,
# slurmd and slurmrestd (JWT, 127.0.0.1:6820), the dev site's storage targets
# (docker/slurm/storage.sh) and its accounts.
# Idempotent: installs only what is missing and starts only what is down.
# Every pid it starts is recorded under $RUN_DIR; docker/slurm/stop.sh stops them.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"

[ "$(id -u)" = 0 ] || die "run as root: it installs packages and starts daemons"

SLURM_CONF=/etc/slurm/slurm.conf
JWT_KEY=${SLURM_JWT_KEY_FILE:-/etc/slurm/jwt_hs256.key}
PARTITION=${SLURM_PARTITION:-debug}
REST_ADDR=${SLURMRESTD_LISTEN:-127.0.0.1:6820}
REST_USER=slurmrestd

# curl: job scripts post their output back to the portal with it.
apt_install slurmctld slurmd slurm-client slurmrestd slurm-wlm-jwt-plugin munge fio curl
# IOR and mdtest with Open MPI (built once). slurmd finds Open MPI's PMIx library (for
# srun --mpi=pmix) only if it was there when slurmd started: one started before is
# restarted (its running jobs go on).
had_pmix=$(dpkg-query -W -f='${Status}' libpmix2 2>/dev/null | grep -c 'install ok installed' || true)
"$here/ior.sh"
# darshan-runtime (without MPI) and darshan-util, from the vendored source (built once,
# about a minute): each lab run records its own I/O with it (RUN_DARSHAN_RUNTIME).
"$here/../darshan/build.sh"
if [ "$had_pmix" = 0 ] && alive "$RUN_DIR/slurmd.pid"; then
  stop_pidfile slurmd "$RUN_DIR/slurmd.pid"
fi

host=$(hostname -s)
getent hosts "$host" >/dev/null || { echo "127.0.0.1 $host" >>/etc/hosts; say "added $host to /etc/hosts"; }

mkdir -p "$RUN_DIR" "$LOG_DIR" "$STATE_DIR/slurm/ctld" "$STATE_DIR/slurm/slurmd"
chown slurm:slurm "$STATE_DIR/slurm/ctld" "$LOG_DIR"
chmod 0755 "$LOG_DIR"

# The JWT key: 32 random bytes that only slurm and the portal's group (its workers sign
# each user's token with it) can read.
if [ ! -s "$JWT_KEY" ]; then
  head -c 32 /dev/urandom >"$JWT_KEY"
  say "created the JWT key $JWT_KEY"
fi
if getent group "$PORTAL_USER" >/dev/null; then
  chown "slurm:$PORTAL_USER" "$JWT_KEY"
  chmod 0640 "$JWT_KEY"
else
  chown slurm:slurm "$JWT_KEY"
  chmod 0600 "$JWT_KEY"
fi

node=$(slurmd -C | head -n 1)
nodename=$(printf '%s\n' "$node" | sed -n 's/^NodeName=\([^ ]*\).*/\1/p')
# The lab's 8-process exercises need 8 CPUs on the node: a machine with fewer says it
# has 8 (one core each; slurmd believes slurm.conf, SlurmdParameters=config_overrides),
# so their 8 MPI ranks share its cores, as 8 processes of one program would.
cpus=$(printf '%s\n' "$node" | sed -n 's/.* CPUs=\([0-9]*\).*/\1/p')
node_cpus=${STORAGELAB_NODE_CPUS:-8}
if [ "${cpus:-0}" -lt "$node_cpus" ]; then
  memory=$(printf '%s\n' "$node" | sed -n 's/.* RealMemory=\([0-9]*\).*/\1/p')
  node="NodeName=$nodename CPUs=$node_cpus Boards=1 SocketsPerBoard=1 CoresPerSocket=$node_cpus ThreadsPerCore=1 RealMemory=$memory"
fi
conf=$(sed -e "s|@HOST@|$host|" -e "s|@STATE@|$STATE_DIR/slurm|g" -e "s|@RUN@|$RUN_DIR|g" \
  -e "s|@LOG@|$LOG_DIR|g" -e "s|@JWT_KEY@|$JWT_KEY|" -e "s|@NODE@|$node|" \
  -e "s|@NODENAME@|$nodename|" -e "s|@PARTITION@|$PARTITION|" "$here/slurm.conf.in")
if [ "$(cat "$SLURM_CONF" 2>/dev/null)" != "$conf" ]; then
  # A changed configuration only takes effect on a restart.
  "$here/stop.sh" --daemons-only >/dev/null 2>&1 || true
  mkdir -p "$(dirname "$SLURM_CONF")"
  printf '%s\n' "$conf" >"$SLURM_CONF"
  say "wrote $SLURM_CONF"
fi

# munge: the packages create the key; the daemon runs as the munge user.
mkdir -p /run/munge && chown munge:munge /run/munge
if ! alive /run/munge/munged.pid; then
  rm -f /run/munge/munged.pid
  runuser -u munge -- /usr/sbin/munged --force
  wait_for munged 10 alive /run/munge/munged.pid
  say "started munged (pid $(cat /run/munge/munged.pid))"
fi
cp /run/munge/munged.pid "$RUN_DIR/munged.pid"

# Here the cluster shares the portal's cores, where at a site it is other hardware:
# its daemons and its benchmarks must yield to the pages. Niceness alone does not do
# it: Slurm starts each job in a session of its own, and the kernel's autogroups share
# the CPU between sessions before niceness counts. So slurmctld and slurmrestd, which
# answer the portal, run in a CPU cgroup of a small share (cluster_cpu_group in
# docker/lib.sh), and slurmd with every job in an idle group (idle_cpu_group), as the
# multi-node cluster's nodes (docker/cluster/start.sh): a job runs on what the portal
# leaves and gives the CPU up to any of its processes that wakes, as a job on another
# machine would. In the small-share group a class's jobs still took 1.4 of the two
# cores while its pages waited (bench/README.md); a quiet machine gives them all of it.
cluster_group=$(cluster_cpu_group)
jobs_group=$(idle_cpu_group)
[ -n "$jobs_group" ] || jobs_group=$cluster_group
[ -n "$cluster_group" ] ||
  say "no cgroup cpu controller on this machine: the dev cluster competes with the portal for its cores"
# Daemons started before go to their group too (slurmd's next jobs with it).
for daemon in slurmctld slurmd slurmrestd; do
  group=$cluster_group
  [ "$daemon" = slurmd ] && group=$jobs_group
  if [ -n "$group" ] && alive "$RUN_DIR/$daemon.pid"; then
    join_cpu_group "$group" "$(cat "$RUN_DIR/$daemon.pid")"
  fi
done

if ! alive "$RUN_DIR/slurmctld.pid"; then
  "$here/../in-cgroup.sh" "$cluster_group" /usr/sbin/slurmctld
  wait_for slurmctld 20 alive "$RUN_DIR/slurmctld.pid"
  say "started slurmctld (pid $(cat "$RUN_DIR/slurmctld.pid"))"
fi
if ! alive "$RUN_DIR/slurmd.pid"; then
  # The jobs also inherit slurmd's niceness (PropagatePrioProcess=0), as Celery's
  # workers are niced (docker/dev/up.sh).
  "$here/../in-cgroup.sh" "$jobs_group" nice -n 10 /usr/sbin/slurmd
  wait_for slurmd 20 alive "$RUN_DIR/slurmd.pid"
  say "started slurmd (pid $(cat "$RUN_DIR/slurmd.pid"))"
fi
wait_for "slurmctld answering" 30 scontrol ping
# A node left DOWN by an unclean stop would keep every job pending.
if sinfo -h -N -o '%T' | grep -qiE 'down|drain'; then
  scontrol update NodeName="$nodename" State=RESUME >/dev/null 2>&1 || true
fi

# slurmrestd refuses to run as root: it binds the port, then drops to its own user.
id "$REST_USER" >/dev/null 2>&1 ||
  useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$REST_USER"
if ! alive "$RUN_DIR/slurmrestd.pid"; then
  # It runs in the foreground: from /, not from the checkout. slurmrestd 22.05 exits
  # on the next job submission once its working directory is gone (a removed clone).
  (cd / && spawn "$RUN_DIR/slurmrestd.pid" "$LOG_DIR/slurmrestd.log" \
    "$here/../in-cgroup.sh" "$cluster_group" env SLURM_JWT=daemon /usr/sbin/slurmrestd -a rest_auth/jwt \
    -s openapi/v0.0.36,openapi/v0.0.37,openapi/v0.0.38 \
    -u "$REST_USER" -g "$REST_USER" "$REST_ADDR")
  wait_for slurmrestd 20 bash -c "exec 3<>/dev/tcp/${REST_ADDR%:*}/${REST_ADDR#*:}"
  say "started slurmrestd on $REST_ADDR (pid $(cat "$RUN_DIR/slurmrestd.pid"))"
fi

# The dev site's storage targets (loop-mounted images, a throttle): mounted before the
# accounts' directories are made on them.
"$here/storage.sh"
# The dev site's cluster accounts: an instructor, three trainees, and the account the
# weather's canaries run as.
for user in ${STORAGELAB_DEV_ACCOUNTS:-sl-instructor sl-trainee1 sl-trainee2 sl-trainee3 sl-weather}; do
  "$here/account.sh" add "$user"
done
say "Slurm is up: partition $PARTITION, slurmrestd on http://$REST_ADDR"

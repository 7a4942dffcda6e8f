#!/usr/bin/env bash
# docker/cluster/start.sh: the multi-node test cluster of today's Slurm, in containers:
# a controller (slurmctld, and slurmrestd with JWT on 127.0.0.1:$CLUSTER_REST_PORT) and
# two compute nodes (slurmd), from Debian 13's packages (Slurm 24.11), or testing's
# (Slurm 26.05, the default; CLUSTER_SLURM=24.11 for Debian 13's), with fio, and IOR and mdtest built from
# docker/vendor/ with Debian's Open MPI, and a filesystem over the network
# that both nodes mount at /gluster: a GlusterFS volume distributed over two file
# servers (a brick each, in the server's memory: the volume is made afresh at each
# start; users' directories come with their accounts), each server on a link of
# $CLUSTER_SERVER_LINK (700 Mbit/s); and at /gluster-wide a second volume on the same
# servers whose files are cut in 4 MiB pieces spread over both (sharding): the
# striping lesson's layout. It is the dev site's cluster:
# `make demo` and `make test` run the portal on it (docker/dev/up.sh). Built without a
# registry: the base image by debootstrap (docker/base-image.sh), the cluster's image
# from docker/cluster/Dockerfile, rebuilt when its files change (docker/cluster/image.sh).
# One munge key and one JWT key (in $STATE_DIR/cluster) shared by every container; the nodes mount the dev
# site's disk targets and its darshan-runtime. Every container's PID 1 is Docker's init,
# and the daemons run under UIDs no account of this host has (docker/cluster/Dockerfile). Started afresh each time
# (the containers are removed and run again; the images and keys stay); stop.sh stops
# it. Accounts: docker/cluster/account.sh. About 5 s once the image exists.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
DOCKER=${DOCKER:-/usr/bin/docker}
# Which Slurm: Debian's packages of a suite. 26.05 (testing, forky: the newest release,
# what sites move to) or 24.11 (Debian 13, trixie: what a site on Debian's stable runs).
# docker/cluster/image.sh, the first thing run below, builds each from its suite and
# refuses any other release.
RELEASE=${CLUSTER_SLURM:-26.05}
IMAGE=${CLUSTER_IMAGE:-storagelab/cluster:$RELEASE}
# Which cluster: the dev site's, or a second one beside it (CLUSTER_PREFIX=h7-) with
# names of its own: its containers (h7-slurm-ctl, ...), network, label, keys and
# configuration ($STATE_DIR/h7-cluster) and slurmrestd's port, so that a change to the
# cluster can be tried while the dev site's runs its jobs on. Inside, each cluster's
# hosts have the names slurm.conf gives them (aliases on its own network).
PREFIX=${CLUSTER_PREFIX:-}
[[ $PREFIX =~ ^([a-z0-9][a-z0-9-]*-)?$ ]] ||
  die "CLUSTER_PREFIX: lower-case letters, digits and dashes ending in a dash (h7-), not $PREFIX"
[ -z "$PREFIX" ] || [ -n "${CLUSTER_REST_PORT:-}" ] ||
  die "a second cluster (CLUSTER_PREFIX=$PREFIX) needs a port of its own for slurmrestd: CLUSTER_REST_PORT"
LABEL=$(cluster_label)
NETWORK=$(cluster_network)
REST_PORT=${CLUSTER_REST_PORT:-6821}
CONF=$STATE_DIR/${PREFIX}cluster
CTL=${PREFIX}slurm-ctl
NODES=(slurm-n1 slurm-n2)
FILES=(files-1 files-2)
VOLUME=lab
WIDE_VOLUME=lab-wide
# Each file server's network link, both ways (tc's rate): what one server can take,
# as a storage server's link or disks cap it at a site. 700 Mbit/s is about 83 MiB/s,
# well below what this VM's CPUs pass through GlusterFS (~130 MiB/s from eight
# ranks), so a file on one server is limited by its server's link, and a file spread
# over both by the two links and those CPUs. (At 1 Gbit/s a spread file gained
# 1.19-1.46x, too close to the CPUs' limit for a lesson; at 700 Mbit/s 1.43-1.60x in ten
# rounds: bench/README.md.)
LINK=${CLUSTER_SERVER_LINK:-700mbit}
[[ $LINK =~ ^[0-9]+[kmg]?bit$ ]] || die "CLUSTER_SERVER_LINK: a rate as tc writes it (1gbit, 500mbit), not $LINK"

[ "$(id -u)" = 0 ] || die "run as root: it runs Docker and owns the cluster's keys"
"$DOCKER" info >/dev/null 2>&1 || die "Docker does not answer: docker/dev/docker.sh installs and starts it"

# --- the images ----------------------------------------------------------------
# Built when missing or changed (or being built: up.sh starts that early, in the
# background); the image's stamp says which files it was built from.
"$here/image.sh"
stamp=$("$DOCKER" image inspect -f '{{index .Config.Labels "storagelab.stamp"}}' "$IMAGE")

# --- keys and configuration -----------------------------------------------------
# The containers' own munge and slurm users own the keys (no user namespace: the
# numbers are the same on both sides of the mount). Their UIDs, and slurmrestd's, are
# the image's own (docker/cluster/Dockerfile): a host account with one of them would
# own the key on the host, or see the daemon's processes as its own.
ids=$("$DOCKER" run --rm --entrypoint sh "$IMAGE" -c 'echo $(id -u munge) $(id -g munge) $(id -u slurm) $(id -g slurm) $(id -u slurmrestd)')
read -r munge_uid munge_gid slurm_uid slurm_gid rest_uid <<<"$ids"
for uid in "$munge_uid" "$slurm_uid" "$rest_uid"; do
  ! account=$(getent passwd "$uid") ||
    die "UID $uid, which a daemon of the cluster runs as, is this host's ${account%%:*}: give the daemons other UIDs in docker/cluster/Dockerfile"
done
mkdir -p "$CONF/etc"
# Root's; the portal's group may go through it to the JWT key (etc/), and no further.
chmod 0710 "$CONF"
getent group "$PORTAL_USER" >/dev/null && chgrp "$PORTAL_USER" "$CONF"
[ -s "$CONF/munge.key" ] || (umask 077 && head -c 1024 /dev/urandom >"$CONF/munge.key")
chown "$munge_uid:$munge_gid" "$CONF/munge.key"
chmod 0400 "$CONF/munge.key"
# The portal signs users' tokens with this key (SLURM_JWT_KEY_FILE for this cluster).
[ -s "$CONF/etc/jwt_hs256.key" ] || (umask 077 && head -c 32 /dev/urandom >"$CONF/etc/jwt_hs256.key")
# The portal's workers run as its own user and sign with it: its group reads it.
key_group=$slurm_gid
getent group "$PORTAL_USER" >/dev/null && key_group=$(getent group "$PORTAL_USER" | cut -d: -f3)
chown "$slurm_uid:$key_group" "$CONF/etc/jwt_hs256.key"
chmod 0640 "$CONF/etc/jwt_hs256.key"
# The cluster's name says its release (storagelab24, storagelab26): a job's answer
# tells which cluster ran it.
sed "s/@CLUSTER_NAME@/storagelab${RELEASE%%.*}/; s/@RELEASE@/$RELEASE/" "$here/slurm.conf.in" >"$CONF/etc/slurm.conf"
chmod 0644 "$CONF/etc/slurm.conf"
install -m 0755 "$here/prolog.sh" "$here/epilog.sh" "$here/task-prolog.sh" "$CONF/etc/"
chmod 0755 "$CONF/etc"

# Each server's link: the host's end of its veth shapes what goes to it (writes), its
# own end what comes from it (reads), set from the host (the server needs no
# NET_ADMIN). Set again when the cluster is found up: a server restarted since has
# lost it.
shape_links() {
  local server pid link veth shape=(root tbf rate "$LINK" burst 256kb latency 20ms)
  for server in "${FILES[@]/#/$PREFIX}"; do
    pid=$("$DOCKER" inspect -f '{{.State.Pid}}' "$server")
    # Its eth0's peer, by index: read in the server (the host's /sys is the host's).
    link=$("$DOCKER" exec "$server" cat /sys/class/net/eth0/iflink)
    veth=$(ip -o link | awk -F': ' -v i="$link" '$1 == i { sub(/@.*/, "", $2); print $2 }')
    [[ $veth == veth* ]] || die "no host end of $server's network link (index $link: '$veth')"
    tc qdisc replace dev "$veth" "${shape[@]}"
    nsenter -t "$pid" -n tc qdisc replace dev eth0 "${shape[@]}"
  done
}

# --- the containers -------------------------------------------------------------
# Every container's PID 1 is Docker's init (tini), which reaps what ends orphaned
# there: slurmd leaves each job's slurmstepd to PID 1, and slurmd as PID 1 reaps none
# (287 zombies stood on a node after 20 minutes of a demo; 50 after 50 jobs,
# tests/jobs/test_cluster_init_live.py).
init=(--init)
# One that runs this release, image and configuration already is kept: a second
# `make demo` must not end the first one's jobs, nor wait for a new cluster. How the
# containers run is part of the configuration: one started without the init is replaced.
config=$( (cat "$CONF/etc/slurm.conf" "$CONF/etc/"*.sh "${STORAGELAB_IMAGE_DIR:-$STATE_DIR/storage}/caps" 2>/dev/null
  echo "$LINK $WIDE_VOLUME ${init[*]}") | sha256sum | cut -c1-16)
running_config=$("$DOCKER" inspect -f '{{index .Config.Labels "storagelab.config"}}' "$CTL" 2>/dev/null || true)
# A node "planned" is held for a job that waits for more nodes than are free (8a and 8b
# run on both): the cluster works, it is busy.
nodes_answer() {
  local states
  states=$("$DOCKER" exec "$CTL" sinfo -h -o %T 2>/dev/null) && [ -n "$states" ] &&
    ! grep -qvE '^(idle|mixed|allocated|completing|planned)$' <<<"$states"
}
if [ "$running_config" = "$RELEASE-$stamp-$config" ] &&
  [ "$("$DOCKER" ps -q --filter "label=$LABEL" | wc -l)" = $((1 + ${#NODES[@]} + ${#FILES[@]})) ] &&
  curl -s -o /dev/null "http://127.0.0.1:$REST_PORT/openapi/v3" && nodes_answer; then
  shape_links
  say "cluster up already: Slurm $RELEASE, nodes ${NODES[*]}, slurmrestd on 127.0.0.1:$REST_PORT"
  exit 0
fi
"$DOCKER" network inspect "$NETWORK" >/dev/null 2>&1 || "$DOCKER" network create "$NETWORK" >/dev/null
"$DOCKER" rm -f "$CTL" "${NODES[@]/#/$PREFIX}" "${FILES[@]/#/$PREFIX}" >/dev/null 2>&1 || true
common=(--detach "${init[@]}" --network "$NETWORK" --label "$LABEL"
  --label storagelab.config="$RELEASE-$stamp-$config"
  -v "$CONF/etc:/etc/slurm:ro" -v "$CONF/munge.key:/etc/munge/munge.key:ro")
# A site's controller, compute nodes and file servers are other machines than its
# portal: here they share its cores, so they run in CPU cgroups that leave the portal
# its share. The controller (slurmctld, slurmrestd) goes to the small-share group the
# single-node dev cluster uses (cluster_cpu_group, docker/lib.sh: 1/8 of a session's
# weight): it answers the portal's requests. The nodes, their jobs and the file
# servers go to an idle group (idle_cpu_group): they run on what the portal leaves
# and give the CPU up to any of its processes that wakes, as jobs on other machines
# would; a quiet machine gives them all of it, and the lessons' figures are the same.
# A container's own --cpu-shares only weighs it against its siblings: with every
# container under Docker's own group, the cluster took 1.7 of the 2 cores while a
# class's pages waited a minute; in the small-share group its jobs still took 0.65 of
# them and the pages' p95 was 2 s.
group=$(cluster_cpu_group)
nodes_group=$(idle_cpu_group)
[ -n "$nodes_group" ] || nodes_group=$group
[ -n "$group" ] ||
  say "no cgroup cpu controller on this machine: the cluster competes with the portal for its cores"
# Docker names a parent group by its path only with the cgroupfs driver (systemd's
# wants a slice).
parent=() nodes_parent=()
if [ -n "$group" ] && [ "$("$DOCKER" info -f '{{.CgroupDriver}}')" = cgroupfs ]; then
  parent=(--cgroup-parent "/${group##*/}")
  nodes_parent=(--cgroup-parent "/${nodes_group##*/}")
fi
weight=(--cpu-shares "${CLUSTER_CPU_SHARES:-128}")
"$DOCKER" run "${common[@]}" "${parent[@]}" --name "$CTL" --hostname slurm-ctl --network-alias slurm-ctl \
  -p "127.0.0.1:$REST_PORT:6820" "$IMAGE" controller >/dev/null
# The file servers: glusterd needs SYS_ADMIN for the bricks' trusted extended
# attributes. A brick is a tmpfs of the server's: the class's jobs would otherwise
# write gigabytes to the disk the portal's database commits to, which a site's file
# servers never share; what the lessons show is the network and the servers between
# a job and its files.
for server in "${FILES[@]}"; do
  "$DOCKER" run --detach "${init[@]}" --network "$NETWORK" --label "$LABEL" "${nodes_parent[@]}" "${weight[@]}" --cap-add SYS_ADMIN \
    --tmpfs /bricks:size=2g --name "$PREFIX$server" --hostname "$server" --network-alias "$server" "$IMAGE" files >/dev/null
done
glusterd_answers() { "$DOCKER" exec "$1" gluster pool list >/dev/null 2>&1; }
for server in "${FILES[@]/#/$PREFIX}"; do wait_for "glusterd on $server" 30 glusterd_answers "$server"; done
for server in "${FILES[@]:1}"; do "$DOCKER" exec "${PREFIX}files-1" gluster peer probe "$server" >/dev/null; done
peers_connected() { [ "$("$DOCKER" exec "${PREFIX}files-1" gluster pool list | grep -c Connected)" = "${#FILES[@]}" ]; }
wait_for "the file servers to join" 30 peers_connected
gluster() { "$DOCKER" exec "${PREFIX}files-1" gluster --mode=script "$@" >/dev/null; }
bricks=() wide_bricks=()
for server in "${FILES[@]}"; do
  bricks+=("$server:/bricks/$VOLUME")
  wide_bricks+=("$server:/bricks/$WIDE_VOLUME")
done
# Distributed: each file lives whole on one brick, files spread over both.
gluster volume create "$VOLUME" transport tcp "${bricks[@]}" force
gluster volume start "$VOLUME"
# Sharded: a file is cut in 4 MiB pieces (the smallest GlusterFS allows), each piece
# placed on a brick as a file of its own is, so a large file's pieces spread over both
# servers, as a Lustre file striped over all OSTs (lfs setstripe -c -1).
gluster volume create "$WIDE_VOLUME" transport tcp "${wide_bricks[@]}" force
gluster volume set "$WIDE_VOLUME" features.shard on
gluster volume set "$WIDE_VOLUME" features.shard-block-size 4MB
gluster volume start "$WIDE_VOLUME"
shape_links

# The nodes see the dev site's targets at the same paths: its disk targets (mounted
# before the cluster starts: docker/slurm/storage.sh) and each account's tmpfs for
# $TMPDIR (docker/slurm/account.sh), and its darshan-runtime, so that the portal's runs
# run here. An account made later mounts its tmpfs later: that root is a shared mount
# on the host and a slave one in the nodes, so the mount reaches them.
DISK_ROOT=${STORAGELAB_DISK_ROOT:-/srv/storagelab}
TMPFS_ROOT=${STORAGELAB_TMPFS_ROOT:-/dev/shm/storagelab}
DARSHAN=${DARSHAN_PREFIX:-/opt/storagelab/darshan}
shared=()
[ ! -d "$DISK_ROOT" ] || shared+=(-v "$DISK_ROOT:$DISK_ROOT")
if [ -d "$TMPFS_ROOT" ]; then
  shared_root "$TMPFS_ROOT"
  shared+=(-v "$TMPFS_ROOT:$TMPFS_ROOT:rslave")
fi
# The disk targets' caps (storage.sh writes them to its caps file), for each node's
# jobs: the throttle this host's root blkio group has does not reach a container's.
caps=()
while read -r loop what value; do
  [ -b "$loop" ] || continue
  caps+=("--device-read-$what" "$loop:$value" "--device-write-$what" "$loop:$value")
done < <(cat "${STORAGELAB_IMAGE_DIR:-$STATE_DIR/storage}/caps" 2>/dev/null)
[ ! -d "$DARSHAN" ] || shared+=(-v "$DARSHAN:$DARSHAN:ro")
for node in "${NODES[@]}"; do
  # /tmp, where each job's $TMPDIR is made, is the node's memory, as VSC-3's $TMPDIR.
  "$DOCKER" run "${common[@]}" "${nodes_parent[@]}" "${weight[@]}" "${shared[@]}" "${caps[@]}" \
    --cap-add SYS_ADMIN --device /dev/fuse \
    --tmpfs /tmp:size=4g,mode=1777 \
    -e GLUSTER_VOLUME="files-1:/$VOLUME" -e GLUSTER_WIDE_VOLUME="files-1:/$WIDE_VOLUME" --name "$PREFIX$node" --hostname "$node" --network-alias "$node" "$IMAGE" node >/dev/null
done

rest_answers() { curl -s -o /dev/null "http://127.0.0.1:$REST_PORT/openapi/v3"; }
nodes_idle() { [ "$("$DOCKER" exec "$CTL" sinfo -h -o %T 2>/dev/null | sort -u)" = idle ]; }
wait_for "the cluster's slurmrestd" 60 rest_answers
wait_for "the cluster's nodes" 60 nodes_idle
say "cluster up: Slurm $("$DOCKER" exec "$CTL" scontrol --version | cut -d' ' -f2), nodes ${NODES[*]} (GlusterFS volumes $VOLUME at /gluster and $WIDE_VOLUME at /gluster-wide, $LINK a server), slurmrestd on 127.0.0.1:$REST_PORT"

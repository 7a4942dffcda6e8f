"""What the host was short of while a bench ran: every few seconds, the kernel's
pressure figures (/proc/pressure: the share of time some task waited for the CPU or
for I/O), what the portal's database sessions were waiting on (pg_stat_activity),
how many tasks waited on each Celery queue, and who used the cores (cpu_by_kind).
Summed up per phase, they tell a page that waited for the CPU from one that waited
for the disk, a lock, or a backlog, and which part of the system took the CPU."""

import os
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path

import redis
from django.conf import settings
from django.db import connections

QUEUES = ("celery", "results", "darshan")
WAITS_SQL = """
SELECT coalesce(wait_event_type || ':' || wait_event, 'on CPU'), count(*)
FROM pg_stat_activity
WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid()
GROUP BY 1
"""


# The clusters' CPU groups (docker/lib.sh: cluster_cpu_group, idle_cpu_group): a job's
# processes live a few seconds, so they are counted by their group, not by pid.
CLUSTER_GROUPS = {
    "cluster: slurmctld, slurmrestd": "storagelab-cluster",
    "cluster: nodes, jobs, file servers": "storagelab-nodes",
}


def _group_cpu_s(name: str) -> float | None:
    """The CPU seconds a group used so far: cgroup v1's cpuacct, or v2's cpu.stat."""
    try:
        return int(Path(f"/sys/fs/cgroup/cpuacct/{name}/cpuacct.usage").read_text()) / 1e9
    except OSError:
        pass
    try:
        stat = Path(f"/sys/fs/cgroup/{name}/cpu.stat").read_text().split()
    except OSError:
        return None
    return int(stat[stat.index("usage_usec") + 1]) / 1e6


TICK_S = 1 / os.sysconf("SC_CLK_TCK")


def _kind(pid: str, comm: str) -> str | None:
    """What a host process is, by its command line; None for the cluster's (counted
    by group) and for anything not told apart ("other": the rest of the busy time)."""
    try:
        if "storagelab-" in Path(f"/proc/{pid}/cgroup").read_text():
            return None
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return None
    if int(pid) == os.getpid():
        return "bench itself (pytest)"
    for word, kind in (
        ("gunicorn", "web (gunicorn)"),
        ("celery", "celery"),
        ("locust", "load generator (locust)"),
        ("redis", "redis"),
    ):
        if word in command:
            return kind
    if comm.startswith("postgres") or "postgres" in command:
        return "postgresql"
    if comm in ("dockerd", "containerd", "containerd-shim", "docker-proxy"):
        return "docker"
    return None


class CpuUse:
    """CPU seconds used since the last look, by kind of process: the host's own
    processes by pid (they live long), the cluster's by CPU group, "other" for the
    rest of the host's busy time (/proc/stat: kernel threads, such as the loop devices
    under the dev targets, and processes too short-lived to be seen), and the time
    the hypervisor gave the VM's cores to another guest."""

    def __init__(self):
        self.kinds: dict[str, str | None] = {}
        self.ticks: dict[str, int] = {}
        self.groups: dict[str, float] = {}
        self.busy, self.steal = self._busy()
        self.look()

    @staticmethod
    def _busy() -> tuple[float, float]:
        fields = [int(v) for v in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
        idle = fields[3] + fields[4]  # idle, iowait
        return (sum(fields[:7]) - idle) * TICK_S, fields[7] * TICK_S  # busy, steal

    def look(self) -> dict[str, float]:
        used: Counter = Counter()
        ticks = {}
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
            except OSError:
                continue
            comm = stat[stat.index("(") + 1 : stat.rindex(")")]
            fields = stat[stat.rindex(")") + 2 :].split()
            now = int(fields[11]) + int(fields[12])  # utime, stime
            if pid not in self.kinds:
                self.kinds[pid] = _kind(pid, comm)
            if self.kinds[pid]:
                used[self.kinds[pid]] += (now - self.ticks.get(pid, now)) * TICK_S
                ticks[pid] = now
        self.ticks = ticks
        for kind, name in CLUSTER_GROUPS.items():
            if (seconds := _group_cpu_s(name)) is not None:
                used[kind] += seconds - self.groups.get(kind, seconds)
                self.groups[kind] = seconds
        busy, steal = self._busy()
        used["other"] = max(0.0, busy - self.busy - sum(used.values()))
        # Time the VM's cores were ready to run and the hypervisor ran another guest.
        used["stolen by the hypervisor"] = steal - self.steal
        self.busy, self.steal = busy, steal
        return dict(used)


def psi(resource: str) -> tuple[float, float]:
    """The kernel's `some` and `full` avg10 for `resource` (cpu, io), in %."""
    try:
        lines = Path(f"/proc/pressure/{resource}").read_text().splitlines()
    except OSError:
        return 0.0, 0.0
    values = [float(line.split()[1].split("=")[1]) for line in lines[:2]]
    return values[0], values[1] if len(values) > 1 else 0.0


class Sampler:
    """Samples every `every_s` seconds in a thread of its own until stopped."""

    def __init__(self, every_s: float = 5.0):
        self.every_s = every_s
        self.samples: list[dict] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> "Sampler":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
        db = connections.create_connection("default")
        cpu = CpuUse()
        try:
            while not self._stop.wait(self.every_s):
                with db.cursor() as cursor:
                    cursor.execute(WAITS_SQL)
                    waits = dict(cursor.fetchall())
                self.samples.append(
                    {
                        "at": time.time(),
                        "cpu_some": psi("cpu")[0],
                        "io_some": psi("io")[0],
                        "io_full": psi("io")[1],
                        "db_waits": waits,
                        "queued": {q: broker.llen(q) for q in QUEUES},
                        "cpu_s": cpu.look(),
                    }
                )
        finally:
            db.close()

    def by_phase(self, bounds: dict[str, tuple[float, float]]) -> dict[str, dict]:
        """Per phase: the mean CPU and I/O pressure (%), the database's active
        sessions by what they waited on (mean per sample), the longest queues, and the
        cores each kind of process used (mean: 2.0 is both cores of a 2-core host)."""
        phases: dict[str, list[dict]] = defaultdict(list)
        for sample in self.samples:
            phase = next((p for p, (a, b) in bounds.items() if a <= sample["at"] < b), None)
            if phase:
                phases[phase].append(sample)
        out = {}
        for phase, samples in phases.items():
            n = len(samples)
            waits: Counter = Counter()
            cpu: Counter = Counter()
            for sample in samples:
                waits.update(sample["db_waits"])
                cpu.update(sample["cpu_s"])
            span = n * self.every_s
            out[phase] = {
                "samples": n,
                "cpu_some_pct": round(sum(s["cpu_some"] for s in samples) / n, 1),
                "io_some_pct": round(sum(s["io_some"] for s in samples) / n, 1),
                "io_full_pct": round(sum(s["io_full"] for s in samples) / n, 1),
                "db_active_by_wait": {k: round(v / n, 2) for k, v in waits.most_common(6)},
                "queued_max": {q: max(s["queued"][q] for s in samples) for q in QUEUES},
                "cores_by_kind": {k: round(v / span, 2) for k, v in cpu.most_common()},
            }
        return out

"""What the host was short of while a bench ran: every few seconds, the kernel's
pressure figures (/proc/pressure: the share of time some task waited for the CPU or
for I/O), what the portal's database sessions were waiting on (pg_stat_activity),
and how many tasks waited on each Celery queue. Summed up per phase, they tell a page
that waited for the CPU from one that waited for the disk, a lock, or a backlog."""

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
                    }
                )
        finally:
            db.close()

    def by_phase(self, bounds: dict[str, tuple[float, float]]) -> dict[str, dict]:
        """Per phase: the mean CPU and I/O pressure (%), the database's active
        sessions by what they waited on (mean per sample), and the longest queues."""
        phases: dict[str, list[dict]] = defaultdict(list)
        for sample in self.samples:
            phase = next((p for p, (a, b) in bounds.items() if a <= sample["at"] < b), None)
            if phase:
                phases[phase].append(sample)
        out = {}
        for phase, samples in phases.items():
            n = len(samples)
            waits: Counter = Counter()
            for sample in samples:
                waits.update(sample["db_waits"])
            out[phase] = {
                "samples": n,
                "cpu_some_pct": round(sum(s["cpu_some"] for s in samples) / n, 1),
                "io_some_pct": round(sum(s["io_some"] for s in samples) / n, 1),
                "io_full_pct": round(sum(s["io_full"] for s in samples) / n, 1),
                "db_active_by_wait": {k: round(v / n, 2) for k, v in waits.most_common(6)},
                "queued_max": {q: max(s["queued"][q] for s in samples) for q in QUEUES},
            }
        return out

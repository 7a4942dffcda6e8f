"""`make bench`: a class at scale, written to bench/results/class.json.

200 trainees and their instructor are locust users (bench/locustfile.py) in locust's
own process, on loopback. Each trainee logs in as it arrives; when the class starts,
it opens the lab page, ticks the four dev targets (2-5 s), starts 4 runs of 1a and,
from 2 s later on, polls the runs panel every 2 s until its runs are final. The
instructor polls the course overview every 3 s. The portal runs as in production:
gunicorn, a Celery worker and beat in processes of their own, on the test database,
and the jobs run on the dev cluster (docker/cluster/: Slurm 26.05, two nodes), whose
nodes post their results to the portal over the cluster's network. slurmrestd is
reached through a link that counts its requests by kind.

Four phases, by when a request started: "arrival" (trainees logging in, one every
ARRIVAL_S / 200 s), "ramp" (trainees opening the lab page and starting their runs,
spread over RAMP_S), "held" (every run started, the partition down: the jobs wait in
Slurm and the class polls, the portal's own load), "drain" (the partition up: the
jobs run on the same 2 cores as the portal until every run is final).
Bounded: locust stops after DEADLINE_S whatever happens.
Targets: p95 < 150 ms for every page type in every phase, the login (with the
portal's own password hash, portal/hashers.py) included; 0 errors, all 800 runs
completed, no Slurm job id twice; the instructor's overview polls carry under 20 kB
at p95 (`overview_poll_bytes`).
"""

import csv
import json
import os
import platform
import re
import signal
import statistics
import subprocess
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from django.conf import settings
from django.contrib.auth.models import Permission, User
from django.test import Client
from django.utils.module_loading import import_string

from bench.conftest import pct, write_results
from bench.pressure import Sampler
from exercises.courses.models import Course, Enrollment
from jobs.models import UNFINISHED_STATUSES, BenchmarkRun, RunStatus
from jobs.slurm import get_client
from portal import settings as site_settings
from tests.cluster24 import CuttableLink, bridge_address
from tests.contradictions import contradictions

pytestmark = pytest.mark.django_db(transaction=True)

TRAINEES = int(os.getenv("BENCH_TRAINEES", "200"))
RUNS_EACH = 4
ARRIVAL_S = int(os.getenv("BENCH_ARRIVAL_S", "90"))  # trainees log in evenly over this time
RAMP_S = int(os.getenv("BENCH_RAMP_S", "30"))  # then start their runs over this time
HELD_S = int(os.getenv("BENCH_HELD_S", "60"))  # every run started, every job waiting
THINK_S = (2, 5)  # from the lab page to the click on "Start runs": ticking four targets
DEADLINE_S = 15 * 60
PAGE_TARGET_MS = 150
PORT = 8765
GUNICORN = ["--workers", "5", "--log-level", "warning"]  # as docker/dev/demo.sh
NICE = ["nice", "-n", "10"]  # as docker/dev/up.sh starts Celery: pages answer first
ROOT = Path(__file__).resolve().parent.parent
VENV = Path(os.sys.executable).parent
PASSWORD = "bench-Class-pw-1"
PAGE_TYPES = ("login form", "login", "lab page", "start", "runs panel", "overview page", "overview")
POLL_BYTES_TARGET = 20_000  # an overview poll at p95, bytes of its body
PHASES = ("arrival", "ramp", "held", "drain")
# A request's first line: its method and path, the version and query left out.
REQUEST = re.compile(rb"(?m)^(GET|POST|DELETE) /slurm/v[0-9.]+/([a-z/]+?)(?:/[0-9]+)?[ ?]")


@dataclass
class Portal:
    """The portal's processes as a site runs them: `hosts`, the base URL of each web
    replica; each replica's worker gives its jobs that replica's callback URL."""

    hosts: list[str]
    procs: list[subprocess.Popen]

    def stop(self) -> None:
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            proc.wait(timeout=30)


def start_portal(settings, tmp_path, replicas: int, listen: str, env: dict) -> Portal:
    """`replicas` pairs of gunicorn and a Celery worker (every queue), and one Celery
    beat (a site runs one: the sync's lock would hold with two, but each would tick),
    on the test database. The workers of a class's jobs read their results and logs."""
    celery = [*NICE, VENV / "celery", "-A", "portal"]
    schedule = str(tmp_path / "celerybeat-schedule")
    queues = "celery,results,darshan"
    procs, hosts = [], []
    for replica in range(replicas):
        port = PORT + replica
        own = {
            **os.environ,
            "DB_NAME": settings.DATABASES["default"]["NAME"],
            "PORTAL_CALLBACK_URL": f"http://{listen}:{port}",
            "ALLOWED_HOSTS": f"127.0.0.1,localhost,{listen}",
            "LOG_LEVEL": "WARNING",
            **env,
        }
        bind = ["--bind", f"127.0.0.1:{port}"] + (
            ["--bind", f"{listen}:{port}"] * (listen != "127.0.0.1")
        )
        commands = [
            [VENV / "gunicorn", "portal.wsgi", *bind, *GUNICORN],
            [*celery, "worker", "--queues", queues, "--concurrency", "2", "--loglevel", "WARNING",
             "--hostname", f"bench{replica}@%h"],
        ]  # fmt: skip
        if replica == 0:
            commands.append([*celery, "beat", "--loglevel", "WARNING", "--schedule", schedule])
        procs += [subprocess.Popen(command, cwd=ROOT, env=own) for command in commands]
        hosts.append(f"http://127.0.0.1:{port}")
    for host in hosts:
        for _ in range(100):
            try:
                httpx.get(f"{host}/healthz", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.2)
    settings.PORTAL_CALLBACK_URL = f"http://{listen}:{PORT}"
    return Portal(hosts, procs)


@dataclass
class Slurm:
    """The cluster a class runs on: how its partition goes down and up, and how many
    requests slurmrestd had (all, and `GET .../jobs`, the sync's)."""

    partition: Callable[[str], None]
    requests: Callable[[], Counter]


class CountingLink(CuttableLink):
    """A TCP link to slurmrestd that counts the requests passing through it by method
    and path ("GET jobs", "POST job/submit"), as slurmrestd's own log would."""

    def __init__(self, to_port: int):
        self.counts: Counter = Counter()
        self.lock = threading.Lock()
        super().__init__("127.0.0.1", to_port)

    def sent(self, data: bytes) -> None:
        found = Counter(f"{m.decode()} {p.decode()}" for m, p in REQUEST.findall(data))
        with self.lock:
            self.counts.update(found)

    def requests(self) -> Counter:
        with self.lock:
            return Counter(self.counts)


def start_on_the_cluster(settings, tmp_path, replicas: int, env: dict) -> tuple[Portal, Slurm]:
    """start_portal with the dev cluster behind it: the web servers listen on the
    cluster's network too (the nodes post there), and slurmrestd is reached through a
    CountingLink. Stop it with `stop_on_the_cluster`."""
    link = CountingLink(int(settings.SLURMRESTD_URL.rsplit(":", 1)[1]))
    settings.SLURMRESTD_URL = link.url
    portal = start_portal(
        settings, tmp_path, replicas, bridge_address(), {"SLURMRESTD_URL": link.url, **env}
    )
    return portal, Slurm(partition=set_partition, requests=link.requests)


def stop_on_the_cluster(portal: Portal) -> None:
    portal.stop()
    # A bench stopped at its deadline leaves its class's jobs queued, which would run
    # on and post to no one: the bench has the cluster to itself, all go.
    subprocess.run(
        ["docker", "exec", "slurm-ctl", "scancel", "--partition", settings.SLURM_PARTITION],
        check=False, timeout=60,
    )  # fmt: skip


@pytest.fixture
def portal_processes(settings, tmp_path, cluster24):
    """gunicorn, a Celery worker and beat on the test database, as `make demo` runs
    them, and the dev cluster they submit to."""
    portal, slurm = start_on_the_cluster(settings, tmp_path, 1, {})
    yield portal, slurm
    stop_on_the_cluster(portal)


def test_a_class_of_200(
    portal_processes, dev_profile, make_user, make_cluster_username, tmp_path
) -> None:
    portal, slurm = portal_processes
    # The four targets of the course's lab (the dev site has $BINFS and $WORK besides).
    targets = list(dev_profile.targets.filter(key__in=["home", "global", "scratch", "tmp"]))
    assert len(targets) == RUNS_EACH
    run_class(
        "class", portal, slurm, dev_profile, targets, [TRAINEES], make_user,
        make_cluster_username, tmp_path,
    )  # fmt: skip


def run_class(
    name, portal, slurm, profile, targets, class_sizes, make_user, make_account, tmp_path,
    accounts_ready=lambda names: None, deadline_s=DEADLINE_S, class_gap_s=0,
    besides=lambda counted_from: {},
) -> dict:  # fmt: skip
    """Classes of `class_sizes` trainees, each class a course of its own with its
    instructor, run exercise 1a on `targets` (one run each) as bench/locustfile.py
    has them, each class starting `class_gap_s` after the one before (in rooms of
    their own, on schedules of their own); the figures go to bench/results/NAME.json,
    with what `besides(counted_from)` adds (what else ran from the moment slurmrestd's
    requests are counted, a time.time()), and are asserted."""
    base = portal.hosts[0]
    courses, trainees = [], []
    for number, size in enumerate(class_sizes):
        instructor = make_user(f"sl-instructor{number}")
        instructor.user_permissions.add(Permission.objects.get(codename="teach_course"))
        course = Course.objects.create(
            title=f"Class at scale {number + 1}", profile=profile, max_active_runs=len(targets)
        )
        course.instructors.add(instructor)
        course.exercises.set(profile.exercises.filter(key="1a"))
        course.targets.set(targets)
        members = [make_user(make_account()) for _ in range(size)]
        Enrollment.objects.bulk_create(Enrollment(course=course, user=t) for t in members)
        courses.append((course, instructor, members))
        trainees += members
    accounts_ready([t.cluster_account.username for t in trainees])
    everyone = [i.pk for _, i, _ in courses] + [t.pk for t in trainees]
    # The portal's own hasher (the test process hashes with MD5): one hash for all.
    hasher = import_string(site_settings.PASSWORD_HASHERS[0])()
    hashed = hasher.encode(PASSWORD, hasher.salt())
    User.objects.filter(pk__in=everyone).update(password=hashed)
    hash_ms = min(timed(hasher.verify, PASSWORD, hashed) for _ in range(3)) * 1000
    for host in portal.hosts:
        warm_up(host, courses[0][1], courses[0][0])

    arrival_s = max(1, ARRIVAL_S * len(trainees) // TRAINEES)
    plan = tmp_path / "plan.json"
    plan.write_text(
        json.dumps(
            {
                "courses": [
                    {
                        "id": c.pk,
                        "instructor": i.username,
                        "trainees": [t.username for t in m],
                        "start_after": number * class_gap_s,
                    }
                    for number, (c, i, m) in enumerate(courses)
                ],  # fmt: skip
                "hosts": portal.hosts,
                "password": PASSWORD,
                "exercise": "1a",
                "targets": [t.key for t in targets],
                "poll_seconds": 2,
                "overview_seconds": 3,
                "start_from": time.time() + arrival_s + 5,  # locust takes ~2 s to start
                "start_seconds": RAMP_S,
                "think_seconds": THINK_S,
            }
        )
    )
    timings = tmp_path / "timings.csv"

    load_before = os.getloadavg()
    speed_before = host_speed(base)
    requests_before, counted_from = slurm.requests(), time.time()
    # The jobs wait in Slurm through the ramp and the held phase: the portal's own
    # load. On a real site benchmarks run on compute nodes, not beside the web server.
    slurm.partition("DOWN")
    locust_log = (tmp_path / "locust.log").open("w")
    locust = subprocess.Popen(
        [
            VENV / "locust",
            "-f",
            ROOT / "bench" / "locustfile.py",
            "--headless",
            "--host",
            base,
            "--users",
            str(len(trainees) + len(courses)),
            "--spawn-rate",
            f"{len(trainees) / arrival_s:.3f}",
            "--run-time",
            f"{deadline_s}s",
            "--only-summary",
            "--loglevel",
            "WARNING",
        ],
        cwd=ROOT,
        env={**os.environ, "BENCH_PLAN": str(plan), "BENCH_TIMINGS": str(timings)},
        stdout=locust_log,
        stderr=subprocess.STDOUT,
        # A session of its own: the kernel's autogroups then give it the CPU as soon as
        # it wakes, as the class's browsers on other machines would have it, rather
        # than queueing its clock behind the portal's workers in one group.
        start_new_session=True,
    )
    started = time.time()
    sampler = Sampler().start()
    ramp_start = json.loads(plan.read_text())["start_from"]
    runs = BenchmarkRun.objects.filter(course__in=[c for c, _, _ in courses])
    expected = len(trainees) * len(targets)
    try:
        # Arrival, then the ramp: until every trainee has started, or the deadline for that.
        last_start = ramp_start + (len(courses) - 1) * class_gap_s + RAMP_S
        while runs.count() < expected and time.time() < last_start + 120:
            if locust.poll() is not None:
                break
            time.sleep(1)
        ramp_end = time.time()
        time.sleep(HELD_S)
        held_end = time.time()
        slurm.partition("UP")
        # Drain: until every run is final and every trainee has seen it (286).
        while time.time() - started < deadline_s and locust.poll() is None:
            final = not runs.filter(status__in=UNFINISHED_STATUSES).exists()
            if final and stopped_polling(timings) >= len(trainees):
                break
            time.sleep(2)
        end = time.time()
    finally:
        sampler.stop()
        slurm.partition("UP")
        if locust.poll() is None:
            locust.send_signal(signal.SIGTERM)  # locust stops its users, then exits
        try:
            locust.wait(timeout=30)
        except subprocess.TimeoutExpired:
            locust.kill()
        locust_log.close()
    load_after = os.getloadavg()
    speed_after = host_speed(base)
    seconds = end - started
    slurm_requests = slurm.requests() - requests_before

    bounds = {
        "arrival": (started, ramp_start),
        "ramp": (ramp_start, ramp_end),
        "held": (ramp_end, held_end),
        "drain": (held_end, end),
    }
    pages, errors = by_phase(timings, bounds)
    statuses = Counter(runs.values_list("status", flat=True))
    jobs = [
        job.job_id
        for job in get_client().jobs(settings.SLURM_SERVICE_USER) or []
        if job.name.startswith("storagelab-")
    ]
    job_ids = list(runs.exclude(slurm_job_id=None).values_list("slurm_job_id", flat=True))
    figures = {
        "measured_at": datetime.now(UTC).isoformat(),
        "trainees": len(trainees),
        "courses": len(courses),
        "replicas": len(portal.hosts),
        "runs_expected": expected,
        "runs_in_db": runs.count(),
        "run_statuses": dict(statuses),
        "runs_final": sum(n for status, n in statuses.items() if status not in UNFINISHED_STATUSES),
        "runs_lost": statuses.get(RunStatus.LOST, 0),
        "duplicate_job_ids": len(job_ids) - len(set(job_ids)),
        "runs_without_result": runs.filter(status="completed", result__isnull=True).count(),
        "seconds": seconds,
        "phases": {
            phase: {"from_s": round(a - started, 1), "seconds": round(b - a, 1)}
            for phase, (a, b) in bounds.items()
        },
        "pages": pages,
        "errors": errors,
        # What the host was short of, per phase (bench/pressure.py).
        "pressure": sampler.by_phase(bounds),
        "overview_poll_bytes": poll_bytes(timings),
        "login_hash_ms": hash_ms,
        "slurmrestd_requests": slurm_requests.total(),
        "slurmrestd_requests_per_s": slurm_requests.total() / seconds,
        "slurmrestd_by_kind": dict(slurm_requests),
        # The sync asks for the job list once a cycle (beat: every SYNC_INTERVAL_SECONDS),
        # however many replicas and runs.
        "sync_cycles_at_most": seconds / settings.SYNC_INTERVAL_SECONDS,
        "slurm_jobs_listed": len(jobs),
        "load": {
            "generator": "locust, in a process of its own",
            "arrival_s": arrival_s,
            "ramp_s": RAMP_S,
            "class_gap_s": class_gap_s,
            "held_s": HELD_S,
            "gunicorn": " ".join(GUNICORN),
        },
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "loadavg_before": load_before,
            "loadavg_after": load_after,
            # The same page from gunicorn on the quiet machine, before the class and
            # after it: a run on a slow host tells from one of slow code.
            "quiet_page_ms_before": speed_before,
            "quiet_page_ms_after": speed_after,
        },
    } | besides(counted_from)
    # Each trainee's exercise page once their runs are in, as they read it last: how
    # many say something the figures on that same page deny (issue 57: none).
    figures["words"] = words_held(base, trainees)
    write_results(name, figures)
    print(f"\n{len(courses)} class(es), {len(trainees)} trainees, {len(portal.hosts)} replica(s) "
          f"(bench/results/{name}.json):")  # fmt: skip
    print(f"  {figures['runs_in_db']} runs in {seconds:.0f} s: {dict(statuses)}")
    print(f"  load average before {load_before[0]:.2f}, after {load_after[0]:.2f}")
    print(f"  host: a quiet page in {speed_before:.1f} ms before, {speed_after:.1f} ms after")
    for phase, phase_pages in pages.items():
        print(f"  {phase} ({figures['phases'][phase]['seconds']:.0f} s):")
        for page, f in phase_pages.items():
            print(
                f"    {page:13} n={f['n']:6} p50 {f['p50_ms']:4.0f}  p95 {f['p95_ms']:4.0f}  "
                f"p99 {f['p99_ms']:4.0f} ms  errors {f['errors']}"
            )
    for phase, short in figures["pressure"].items():
        print(f"  {phase}: {short}")
    polls = figures["overview_poll_bytes"]
    print(f"  overview polls: {polls['all polls']}; with a body: {polls['200 answers']}")
    print(f"  errors: {errors or 0}; one password hash: {hash_ms:.0f} ms")
    print(f"  slurmrestd: {dict(slurm_requests)}, {slurm_requests.total() / seconds:.1f}/s")
    if errors or figures["runs_in_db"] != expected:
        print((tmp_path / "locust.log").read_text()[-3000:])
    assert not errors
    assert figures["runs_in_db"] == expected
    assert statuses.get(RunStatus.COMPLETED) == expected
    assert figures["duplicate_job_ids"] == 0
    slow = {
        (phase, page): f["p95_ms"]
        for phase, phase_pages in pages.items()
        for page, f in phase_pages.items()
        if f["p95_ms"] >= PAGE_TARGET_MS
    }
    assert not slow, f"p95 >= {PAGE_TARGET_MS} ms"
    assert polls["all polls"]["p95"] < POLL_BYTES_TARGET
    words = figures["words"]
    print(f"  words: {words['pages_read']} trainees' pages read, {words['pages_contradicted']} "
          "with a sentence their figures deny")  # fmt: skip
    assert words["pages_read"] == len(trainees)
    assert words["pages_contradicted"] == 0, words["examples"]
    return figures


def words_held(base: str, trainees: list[User]) -> dict:
    """Each trainee's page of 1a, from the portal as they would read it, counted by
    tests/contradictions.py: pages read, pages with a sentence the figures on the same
    page deny (or an outcome no figure holds), and a few of those sentences."""
    contradicted, examples = 0, []
    for trainee in trainees:
        client = Client()
        client.force_login(trainee)
        cookies = {settings.SESSION_COOKIE_NAME: client.cookies[settings.SESSION_COOKIE_NAME].value}
        with httpx.Client(base_url=base, cookies=cookies, timeout=30) as http:
            found = contradictions(http.get("/lab/1a/").text)
        contradicted += bool(found)
        examples += found[: max(0, 5 - len(examples))]
    return {"pages_read": len(trainees), "pages_contradicted": contradicted, "examples": examples}


def timed(fn, *args) -> float:
    started = time.perf_counter()
    fn(*args)
    return time.perf_counter() - started


def by_phase(timings: Path, bounds: dict[str, tuple[float, float]]) -> tuple[dict, dict]:
    """Per phase and page type: count, errors, p50/p95/p99 in ms; and the errors."""
    latencies: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    failed: dict[str, Counter] = defaultdict(Counter)
    errors: Counter[str] = Counter()
    with timings.open(newline="") as f:
        for at, name, ms, _status, error, _bytes in csv.reader(f):
            phase = next((p for p, (a, b) in bounds.items() if a <= float(at) < b), "drain")
            latencies[phase][name].append(float(ms))
            if error:
                failed[phase][name] += 1
                errors[f"{name}: {error}"] += 1
    pages = {
        phase: {
            name: summary(latencies[phase][name], failed[phase][name])
            for name in PAGE_TYPES
            if latencies[phase][name]
        }
        for phase in PHASES
    }
    return pages, dict(errors)


def poll_bytes(timings: Path) -> dict[str, dict[str, float]]:
    """The body bytes of the instructor's overview polls: all of them (a 304 has
    none), and those that brought something (200)."""
    with timings.open(newline="") as f:
        polls = [(row[3], int(row[5])) for row in csv.reader(f) if row[1] == "overview"]
    every = [float(n) for _, n in polls]
    brought = [float(n) for status, n in polls if status == "200"]
    return {
        "all polls": {"n": len(every)} | {f"p{p}": pct(every, p) for p in (50, 95, 99)},
        "200 answers": {"n": len(brought)} | {f"p{p}": pct(brought, p) for p in (50, 95, 99)},
        "max": max(every, default=0),
    }


def stopped_polling(timings: Path) -> int:
    """How many trainees were told their runs are all final (the panel's 286)."""
    with timings.open(newline="") as f:
        return sum(1 for row in csv.reader(f) if row[1:2] == ["runs panel"] and row[3:4] == ["286"])


def summary(ms: list[float], errors: int) -> dict[str, float]:
    return {"n": len(ms), "errors": errors} | {f"p{p}_ms": pct(ms, p) for p in (50, 95, 99)}


def set_partition(state: str) -> None:
    """The dev cluster's partition DOWN (jobs wait) or UP, by its controller's scontrol."""
    subprocess.run(
        ["docker", "exec", "slurm-ctl", "scontrol", "update",
         f"PartitionName={settings.SLURM_PARTITION}", f"State={state}"],
        check=True, timeout=30,
    )  # fmt: skip


def warm_up(base: str, instructor: User, course: Course) -> None:
    """Each gunicorn worker imports and compiles on its first requests: not measured."""
    client = Client()
    client.force_login(instructor)
    cookies = {settings.SESSION_COOKIE_NAME: client.cookies[settings.SESSION_COOKIE_NAME].value}
    with httpx.Client(base_url=base, cookies=cookies, timeout=30) as http:
        for _ in range(12):
            http.get("/login/")
            http.get("/lab/1a/")
            http.get("/lab/1a/", headers={"HX-Request": "true"})
            http.get(f"/courses/{course.pk}/overview", headers={"HX-Request": "true"})


def host_speed(base: str) -> float:
    """How fast this host runs the portal, with no class on it: the median of 50
    answers of gunicorn to the login form (no database, no session), in ms. The same
    code ran the ramp at half the speed on a slow host (bench/README.md): this tells
    such a host from slow code. One password hash (login_hash_ms) shows it too."""
    with httpx.Client(base_url=base, timeout=30) as http:
        http.get("/login/")
        return statistics.median(timed(http.get, "/login/") for _ in range(50)) * 1000

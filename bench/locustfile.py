"""The class of bench/test_class.py as locust users, in locust's own process.

Not Django: it knows the portal only by HTTP, as browsers do. The test writes a plan
(JSON, path in BENCH_PLAN): the courses (each with its instructor and trainees), their
password, the exercise and its targets, when the trainees start their runs, and the
portal's replicas ("hosts": each user keeps one, as a sticky load balancer would).
Every request is written to BENCH_TIMINGS as one CSV line (request start as Unix time,
page type, milliseconds, HTTP status, error or "", bytes of the answer's body); the
test sorts the lines into phases by their start; locust's own statistics are unused.

    BENCH_PLAN=plan.json BENCH_TIMINGS=timings.csv locust -f bench/locustfile.py \\
        --headless --host http://127.0.0.1:8765 -u 201 -r 3.3 --run-time 15m

(--host is locust's own requirement; the requests go to the plan's hosts.)
"""

import csv
import html
import json
import os
import random
import re
import time
from itertools import count
from pathlib import Path
from urllib.parse import urlencode

import gevent
from locust import FastHttpUser, constant, events, task
from locust.contrib.fasthttp import LocustBadStatusCode

PLAN = json.loads(Path(os.environ["BENCH_PLAN"]).read_text())
CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
# The version a polled fragment shows, in its markup (portal/templatetags/polling.py).
POLL_HEADERS = re.compile(r'hx-headers="(\{[^"]*If-None-Match[^"]*\})"')
POLL_URL = re.compile(r'hx-get="([^"]*)"[^>]*hx-trigger="every')
# The pace a polled fragment asks for in its markup ("every 10s").
POLL_EVERY = re.compile(r'hx-trigger="every ([0-9]+)s"')
FORM = {"Content-Type": "application/x-www-form-urlencoded"}
HTMX = {"HX-Request": "true"}
# What each page type may answer; anything else is an error.
EXPECTED = {
    "login form": {200},
    "login": {302},  # to the home page: a failed login answers 200 with the form again
    "lab page": {200},
    "start": {200},  # HTMX: the runs panel with the notice
    "runs panel": {200, 286, 304},
    "overview page": {200},
    "overview": {200, 304},
}
# Every trainee of every course in turn, and every course's instructor.
TRAINEES = [
    (name, course["id"], course.get("start_after", 0))
    for course in PLAN["courses"]
    for name in course["trainees"]
]
INSTRUCTORS = [(course["instructor"], course["id"]) for course in PLAN["courses"]]
_next_trainee = count()
_next_instructor = count()
_timings = open(os.environ["BENCH_TIMINGS"], "w", newline="", buffering=1)  # noqa: SIM115
_writer = csv.writer(_timings)


@events.request.add_listener
def record(
    request_type, name, response_time, response_length, response, exception, start_time=None, **_
):
    status = getattr(response, "status_code", 0) or 0
    # Locust takes 286 and 3xx for failures: the status is judged here, by page type.
    failed = exception and not isinstance(exception, LocustBadStatusCode)
    error = type(exception).__name__ if failed else ""
    if not error and status not in EXPECTED.get(name, ()):
        error = f"HTTP {status}"
    if not error and name == "start" and 'class="message error"' in response.text:
        error = "refused"  # StartRefused is a 200 with the reason, in the panel
    row = [f"{start_time:.3f}", name, f"{response_time:.1f}", status, error, response_length or 0]
    _writer.writerow(row)


@events.quitting.add_listener
def close(**_):
    _timings.close()


def poll_headers(page: str) -> dict[str, str]:
    """What HTMX sends with the next poll of the fragment in `page`."""
    found = POLL_HEADERS.search(page or "")
    return json.loads(html.unescape(found.group(1))) if found else {}


def poll_url(page: str) -> str | None:
    """Where the polling element in `page` sends its polls."""
    found = POLL_URL.search(page or "")
    return html.unescape(found.group(1)) if found else None


class PortalUser(FastHttpUser):
    abstract = True
    username = ""
    base = ""

    def at(self, path: str) -> str:
        """The URL of `path` on this user's replica of the portal."""
        return self.base + path

    def keep_replica(self, number: int) -> None:
        hosts = PLAN["hosts"]
        self.base = hosts[number % len(hosts)]

    def log_in(self) -> None:
        page = self.client.get(self.at("/login/"), name="login form")
        token = CSRF_INPUT.search(page.text or "")
        data = {"username": self.username, "password": PLAN["password"], "next": ""}
        self.client.post(
            self.at("/login/"),
            data=urlencode(data | {"csrfmiddlewaretoken": token.group(1) if token else ""}),
            headers=FORM,
            name="login",
            allow_redirects=False,
        )


class Trainee(PortalUser):
    """Logs in as it arrives; when its class starts (at a moment of its own within
    the plan's start window, from its course's start), opens the lab page, ticks every
    target and starts the exercise (HTMX, as the page's form does), then polls the runs
    panel at the pace and with the version the panel it has names, as HTMX does, until
    it answers 286."""

    def wait_time(self) -> float:
        return self.every

    def on_start(self) -> None:
        number = next(_next_trainee)
        self.username, _, start_after = TRAINEES[number]
        self.every = float(PLAN["poll_seconds"])
        self.keep_replica(number)
        self.lab = self.at(f"/lab/{PLAN['exercise']}/")
        self.version: dict[str, str] = {}
        self.following = True
        # Locust starts its users in batches, once a second: trainees do not arrive so.
        gevent.sleep(random.uniform(0, 1))
        self.log_in()
        start_at = PLAN["start_from"] + start_after + random.uniform(0, PLAN["start_seconds"])
        gevent.sleep(max(0.0, start_at - time.time()))
        page = self.client.get(self.lab, name="lab page")
        token = CSRF_INPUT.search(page.text or "")
        # Ticking four targets and clicking takes a trainee a few seconds.
        gevent.sleep(random.uniform(*PLAN["think_seconds"]))
        started = self.client.post(
            f"{self.lab}runs",
            data=urlencode({"targets": PLAN["targets"]}, doseq=True),
            headers=FORM | HTMX | {"X-CSRFToken": token.group(1) if token else ""},
            name="start",
        )
        self.follow(started.text)
        # The panel the start swapped in polls at its pace: its first poll is then.
        gevent.sleep(self.every)

    def follow(self, panel: str) -> None:
        """The version and the pace the panel names, for the next poll."""
        self.version = poll_headers(panel)
        pace = POLL_EVERY.search(panel or "")
        self.every = float(pace.group(1)) if pace else self.every

    @task
    def poll(self) -> None:
        if not self.following:
            return
        response = self.client.get(self.lab, headers=HTMX | self.version, name="runs panel")
        if response.status_code == 286:
            self.following = False
        elif response.status_code == 200:
            self.follow(response.text)


class Instructor(PortalUser):
    """Logs in, opens the course overview and polls it every 3 s as its page does:
    at the URL and with the version its polling element names, taking both from
    each answer that brings a new one; drawn anew when an answer says so."""

    fixed_count = len(INSTRUCTORS)
    wait_time = constant(PLAN["overview_seconds"])

    def on_start(self) -> None:
        number = next(_next_instructor)
        self.username, self.course = INSTRUCTORS[number]
        self.keep_replica(number)
        self.log_in()
        self.open()

    def open(self) -> None:
        overview = self.at(f"/courses/{self.course}/overview")
        page = self.client.get(overview, name="overview page")
        found = poll_url(page.text)
        self.url = self.at(found) if found else overview
        self.version = poll_headers(page.text)

    @task
    def poll(self) -> None:
        response = self.client.get(self.url, headers=HTMX | self.version, name="overview")
        if response.headers.get("HX-Refresh") == "true":
            self.open()
        elif response.status_code == 200:
            self.version = poll_headers(response.text) or self.version

"""Finding a job's log runs in a child given DARSHAN_LOOKUP_SECONDS: a lookup that
hangs (a hung mount) costs its time and says so; a log over the cap is not read."""

import os
import time
from datetime import date

import pytest

from jobio import logdir
from jobio.logdir import LookupRefused, fetch, find_own_log
from tests.jobio.logs import log


def test_a_lookup_that_hangs_is_stopped_and_says_so(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(logdir, "CHILD", "import time; time.sleep(60)")
    began = time.monotonic()

    with pytest.raises(LookupRefused, match="took longer than 1 s"):
        fetch(str(tmp_path), 1, 1000, days=1, max_bytes=2**20, seconds=1, today=date.today())
    assert time.monotonic() - began < 10


def test_a_log_over_the_cap_is_not_read(tmp_path) -> None:
    today = date.today()
    folder = tmp_path / str(today.year) / str(today.month) / str(today.day)
    folder.mkdir(parents=True)
    path = folder / "ada_x_id7-1.darshan"
    path.write_bytes(log("example").read_bytes())
    os.chown(path, 4242, 4242)

    with pytest.raises(LookupRefused, match="more than the 0.0 MiB"):
        find_own_log(tmp_path, 7, 4242, days=1, max_bytes=1000, today=today)
    assert fetch(str(tmp_path), 7, 4242, days=1, max_bytes=2**26, seconds=10, today=today) == (
        log("example").read_bytes()
    )

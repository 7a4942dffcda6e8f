"""Benchmarks reuse the test fixtures: a test database, the live server, a real
Celery worker and real cluster accounts."""

import json
from pathlib import Path

from tests.conftest import *  # noqa: F403

RESULTS = Path(__file__).parent / "results"


def write_results(name: str, figures: dict) -> Path:
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(figures, indent=2, default=str) + "\n")
    return path


def pct(values: list[float], p: int) -> float:
    """The p-th percentile, as the benches report it: the value below which p % lie."""
    values = sorted(values)
    return values[max(0, int(len(values) * p / 100) - 1)] if values else 0.0

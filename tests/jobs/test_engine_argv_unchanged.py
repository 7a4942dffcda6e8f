"""Every exercise of every shipped profile builds the command it built before replays
learned to read, repeat and stop on time (jobs/engines/ is shared with the lab): the
argv of each, on a disk and in memory, is compared with the one recorded in
samples/exercise_argv.json. The workloads are read from the profiles' TOML as the
catalogue reads them (Exercise.workload). Record again only for a change meant for the
lab: `RECORD_ARGV=1 pytest tests/jobs/test_engine_argv_unchanged.py`."""

import json
import os
import tomllib
from pathlib import Path

from jobs.engines import Pattern, Target, Workload, get_engine

SAMPLE = Path(__file__).parent / "samples" / "exercise_argv.json"
SITES = Path(__file__).resolve().parents[2] / "exercises" / "catalogue" / "sites"
TARGETS = {
    "disk": Target(directory="/srv/x/run"),
    "memory": Target(directory="/dev/shm/x/run", tmpfs=True),
}
# The profile's names for Workload's fields, where they differ (Exercise.workload).
RENAMED = {"direct_io": "direct"}


def workload(exercise: dict) -> Workload:
    fields = {RENAMED.get(k, k): v for k, v in exercise.items()}
    given = {name: fields[name] for name in Workload.model_fields if name in fields}
    given["pattern"] = Pattern(given["pattern"])
    given["block_sizes"] = tuple(given.get("block_sizes", ()))
    return Workload(**given)


def every_argv() -> dict[str, list[str]]:
    found = {}
    for path in sorted(SITES.glob("*.toml")):
        data = tomllib.loads(path.read_text())
        for exercise in data.get("exercises", []):
            engine = get_engine(exercise.get("engine") or data["profile"].get("engine", "fio"))
            for where, target in TARGETS.items():
                key = f"{path.stem} {exercise['key']} {where}"
                found[key] = engine.command(workload(exercise), target)
    return found


def test_every_exercise_of_every_profile_builds_the_argv_it_built_before() -> None:
    found = every_argv()
    if os.getenv("RECORD_ARGV"):
        SAMPLE.write_text(json.dumps(found, indent=1) + "\n")
    recorded = json.loads(SAMPLE.read_text())

    assert len(found) >= 90  # every profile's exercises (46), twice
    assert found == recorded

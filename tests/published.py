"""The shipped site profiles read as their files say, and their published figures as
the advisor sees them (tests of the advisor hold its rules to these)."""

import tomllib

from exercises.advisor import TargetFacts
from exercises.catalogue.profiles import PROFILES


def profile(name: str) -> dict:
    return tomllib.loads((PROFILES / f"{name}.toml").read_text())


def facts_of(name: str, sequential: str = "1b", random: str = "2a") -> list[TargetFacts]:
    """A profile's targets as the advisor sees them, with the reference figures of
    the two named exercises."""
    data = profile(name)
    refs = {
        (r["exercise"], r["target"]): in_mib_s(r)
        for r in data.get("references", [])
        if r["metric"] == "write"
    }
    return [
        TargetFacts(
            key=t["key"],
            name=t["name"],
            in_memory=t["in_memory"],
            persistent=t["persistent"],
            shared=t["shared"],
            use_for=tuple(t["use_for"]),
            avoid_for=tuple(t["avoid_for"]),
            sequential_mib_s=refs.get((sequential, t["key"])),
            random_mib_s=refs.get((random, t["key"])),
            quota_gib=t["quota_bytes"] / 2**30 if "quota_bytes" in t else None,
            filesystem=t["filesystem"],
            spread_directory=t.get("spread_path_template", "").replace("{user}", "USER"),
            compression=t.get("compression", ""),
        )
        for t in data["targets"]
    ]


def in_mib_s(reference: dict) -> float:
    """A bandwidth reference of a profile in MiB/s, whatever unit it was published in."""
    scale = {"MiB/s": 1.0, "MB/s": 1e6 / 2**20}[reference["unit"]]
    return reference["value"] * scale


VSC3 = facts_of("vsc3")

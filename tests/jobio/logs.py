"""The committed logs (logs/README.md) and the bad ones tests make from them."""

import zlib
from pathlib import Path

LOGS = Path(__file__).parent / "logs"


def log(name: str) -> Path:
    return LOGS / f"{name}.darshan"


def truncated(tmp: Path, name: str = "example", keep: float = 0.6) -> Path:
    data = log(name).read_bytes()
    path = tmp / "cut.darshan"
    path.write_bytes(data[: int(len(data) * keep)])
    return path


def not_a_log(tmp: Path) -> Path:
    path = tmp / "results.darshan"
    path.write_text("time,MiB/s\n1,120.5\n2,118.0\n")
    return path


def crafted_header(tmp: Path) -> Path:
    """Darshan's version string and a header whose offsets point far past the end of
    the file, with a zlib stream that inflates to 64 MiB of zeros behind it."""
    data = bytearray(log("example").read_bytes()[:8])  # "darshan-3.10" version text start
    data += b"\xff" * 256
    data += zlib.compress(b"\0" * (64 * 2**20), 9)
    path = tmp / "crafted.darshan"
    path.write_bytes(bytes(data))
    return path

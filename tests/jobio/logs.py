"""The committed logs (logs/README.md), the bad ones tests make from them, and a user's
check of one as the worker leaves it once read."""

import zlib
from pathlib import Path

from jobio.models import CheckSource, JobCheck
from jobio.sandbox import parse

LOGS = Path(__file__).parent / "logs"


def log(name: str) -> Path:
    return LOGS / f"{name}.darshan"


def checked(user, name: str = "random-4k") -> JobCheck:
    """`user`'s check of log `name`, read in the sandbox as the worker reads it."""
    io = parse(log(name), seconds=20, memory_bytes=768 * 2**20, max_bytes=64 * 2**20)
    return JobCheck.objects.create(
        user=user, source=CheckSource.UPLOAD, label=f"Upload: {name}", io=io.to_json()
    )


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


# struct darshan_header (darshan-log-format.h): version_string[8], magic_nr (int64),
# comp_type (one byte), then partial_flag (uint64, aligned to 8): a bit per module that
# ran out of room for records; the POSIX module is number 1.
PARTIAL_FLAG_OFFSET = 24
POSIX_MODULE_BIT = 1 << 1


def partial(tmp: Path, name: str = "small-files") -> Path:
    """The log as Darshan writes it when the job opened more files than it could hold:
    the POSIX module's bit set in the header's partial_flag."""
    data = bytearray(log(name).read_bytes())
    flag = int.from_bytes(data[PARTIAL_FLAG_OFFSET : PARTIAL_FLAG_OFFSET + 8], "little")
    data[PARTIAL_FLAG_OFFSET : PARTIAL_FLAG_OFFSET + 8] = (flag | POSIX_MODULE_BIT).to_bytes(
        8, "little"
    )
    path = tmp / "partial.darshan"
    path.write_bytes(bytes(data))
    return path

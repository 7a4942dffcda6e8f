"""What a run's files took on a target that compresses (StorageTarget.stored_by): the
job script measures it after the benchmark and adds one line to the output it posts,
"Storage Lab: stored S of W bytes". The line is the job owner's text, as the rest:
read only as two bounded numbers that can be true together."""

import re

from pydantic import BaseModel, ConfigDict, Field, model_validator

from portal.units import GiB, MiB

SPACE_LINE = re.compile(r"^Storage Lab: stored ([0-9]{1,16}) of ([0-9]{1,16}) bytes$", re.MULTILINE)
# Beyond what a run writes (64 processes of 64 GiB: Workload) nothing was measured.
HELD_MAX = 64 * 64 * GiB
# What a filesystem keeps beside the data: its trees' blocks, a block per small file.
OVERHEAD = 64 * MiB


class Space(BaseModel):
    """The bytes a run's files hold, and those the target stored for them."""

    model_config = ConfigDict(frozen=True)

    held: int = Field(gt=0, le=HELD_MAX)
    stored: int = Field(ge=0)

    @model_validator(mode="after")
    def _can_be_true(self) -> "Space":
        # Compression stores less, never much more: a block each at most, and metadata.
        if self.stored > 2 * self.held + OVERHEAD:
            raise ValueError("more stored than the files hold could need")
        return self

    @property
    def ratio(self) -> float | None:
        """How many times less space the files took than they hold (2.3: a zstd)."""
        return self.held / self.stored if self.stored else None


def kept(held: int | None, stored: int | None) -> Space | None:
    """A result's two columns (RunResult.held_bytes, stored_bytes) as a Space, or None
    where the run measured none."""
    return None if held is None or stored is None else Space(held=held, stored=stored)


def space_of(output: str) -> Space | None:
    """The output's last space line, or None: none, or numbers that cannot be true
    (a run's figure does not fail for a space it could not measure)."""
    found = SPACE_LINE.findall(output)
    if not found:
        return None
    stored, held = found[-1]
    try:
        return Space(held=int(held), stored=int(stored))
    except ValueError:
        return None

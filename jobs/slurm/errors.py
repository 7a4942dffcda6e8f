"""What can go wrong talking to slurmrestd.

`permanent` says whether retrying the same request can help: a refused token or a
rejected job stays refused; a connection reset or a restarting slurmctld passes.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class SlurmMessage:
    """One entry of slurmrestd's `errors[]` array."""

    error: str = ""
    description: str = ""
    source: str = ""
    number: int | None = None

    def __str__(self) -> str:
        text = ": ".join(part for part in (self.description, self.error) if part)
        return f"{text} (error {self.number})" if self.number not in (None, -1, 0) else text


class SlurmError(Exception):
    permanent = False

    def __init__(
        self, message: str, *, status: int | None = None, errors: tuple[SlurmMessage, ...] = ()
    ):
        self.status = status
        self.errors = errors
        details = "; ".join(str(e) for e in errors if str(e))
        super().__init__(f"{message}: {details}" if details else message)


class SlurmConnectionError(SlurmError):
    """slurmrestd could not be reached or did not answer in time."""


class SlurmServerError(SlurmError):
    """slurmrestd answered, but could not do it now (slurmctld down, busy, ...)."""


class SlurmInvalidResponse(SlurmError):
    """An answer that is not what the API promises (wrong type, missing fields)."""


class SlurmAuthError(SlurmError):
    """The token or the user name was refused."""

    permanent = True


class SlurmNotFound(SlurmError):
    """No such endpoint (an API version this slurmrestd lacks) or no such job."""

    permanent = True


class SlurmRejected(SlurmError):
    """Slurm understood the request and said no (bad partition, denied, ...)."""

    permanent = True

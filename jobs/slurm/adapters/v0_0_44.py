"""v0.0.44, Slurm 25.11.

Nothing the client reads or sends changed from v0.0.43 (the fields read of a job
and those of a submission have the same shapes in 25.11's spec).
"""

from jobs.slurm.adapters import v0_0_43

VERSION = "v0.0.44"
previous = v0_0_43
submit_payload = v0_0_43.submit_payload

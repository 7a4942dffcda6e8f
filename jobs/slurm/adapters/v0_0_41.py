"""v0.0.41, Slurm 24.05 (also served by 24.11 to 25.11).

Nothing the client reads or sends changed from v0.0.40.
"""

from jobs.slurm.adapters import v0_0_40

VERSION = "v0.0.41"
previous = v0_0_40
submit_payload = v0_0_40.submit_payload

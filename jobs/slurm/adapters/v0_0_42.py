"""v0.0.42, Slurm 24.11 (the multi-node test cluster's; also served by 25.05, 25.11).

Ping: each controller also says "responding" (a boolean) and "primary"; common.py
reads "responding" where it is given.
Jobs and submission: as v0.0.41.
"""

from jobs.slurm.adapters import v0_0_41

VERSION = "v0.0.42"
previous = v0_0_41
submit_payload = v0_0_41.submit_payload

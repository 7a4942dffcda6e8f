"""v0.0.45, Slurm 26.05 (26.05 serves v0.0.42 to v0.0.45).

Ping: each controller's "pinged" and "mode" are gone; "status" says why one is not
responding. A refused token is no HTTP error on a ping: it answers 200 with the
controller not responding and the status "Protocol authentication error" (common.py
reads it, the client raises it as a refused token).
Jobs and submission: as v0.0.44 for every field the client reads or sends ("power"
left the job's record and its submission, never read or sent here).
"""

from jobs.slurm.adapters import v0_0_44

VERSION = "v0.0.45"
previous = v0_0_44
submit_payload = v0_0_44.submit_payload

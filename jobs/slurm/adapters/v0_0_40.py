"""v0.0.40, Slurm 23.11.

Jobs: job_state a list of flags (the first is the state), times {set, infinite,
number}, exit_code decoded into {return_code, signal}; the job list says
slurmctld's last_update (older versions do not: common.py's _latest_event).
Ping: meta "slurm" names the cluster.
Submission: as v0.0.39.
"""

from jobs.slurm.adapters import v0_0_39

VERSION = "v0.0.40"
previous = v0_0_39
submit_payload = v0_0_39.submit_payload

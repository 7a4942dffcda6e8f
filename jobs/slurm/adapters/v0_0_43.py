"""v0.0.43, Slurm 25.05.

Jobs: `stdout_expanded` is the output path with its patterns (%j, ...) resolved;
`standard_output` stays what was asked for. common.py takes the expanded one.
Submission: as v0.0.42.
"""

from jobs.slurm.adapters import v0_0_42

VERSION = "v0.0.43"
previous = v0_0_42
submit_payload = v0_0_42.submit_payload

"""What a run takes on its target while it goes: its bytes, counted in whole blocks of
the filesystem for each file, and its files (inodes) at once.

One rule, read by the quota check before a run is admitted (exercises/quotas/checks.py,
through jobs/admission.py), by the bound of files at once (admission's `max_files`)
and by the job script, which checks the filesystem's free inodes on its node before it
makes anything (jobs/scripts.py, templates/jobs/job_script.sh).
"""

import math
from dataclasses import dataclass

from jobs.engines import Workload
from portal.units import KiB

# The least space a file of data takes: ext4's, XFS's and a Lustre OST's block. A file
# of 512 B takes 4 KiB on them, so a million such files take 4 GiB, not 512 MB. Where a
# filesystem's block is larger (GPFS's subblocks), the quota itself still holds: this
# is the portal's estimate before the run, not the filesystem's rule.
FILE_BLOCK = 4 * KiB
# Besides the benchmark's files a run makes its own directory and its output file.
RUN_OVERHEAD_FILES = 2


@dataclass(frozen=True)
class Need:
    bytes: int  # whole blocks for each file
    files: int  # at once, the run's own directory and output file included


def files_at_once(workload: Workload) -> int:
    """The benchmark's files at once: each process its files_per_process, or one file
    all share. (mdtest's rounds remove each round's files before the next.)"""
    if not workload.file_per_process:
        return 1
    return workload.processes * workload.files_per_process


def need(workload: Workload) -> Need:
    """Bytes and files a run takes on its target at most (see FILE_BLOCK)."""
    files = files_at_once(workload)
    data = workload.processes * workload.size_per_process
    per_file = math.ceil(data / files / FILE_BLOCK) * FILE_BLOCK
    return Need(bytes=per_file * files, files=files + RUN_OVERHEAD_FILES)

"""Where a run works: a path the portal knows ("/scratch/ada"), or a directory the job's
environment names on its node ("$TMPDIR", "$WORK/ada"), which only the job script can
resolve, when it runs. Slurm makes a job's $TMPDIR afresh on each node it runs on."""

import re
import shlex

# A variable's name, and a plain path below what it names.
_NAMED = re.compile(r"^\$(?P<variable>[A-Z][A-Z0-9_]{0,63})(?P<below>/[A-Za-z0-9_./-]*)?\Z")
# The same match in PostgreSQL (no named groups; "$" ends the string), for queries that
# ask which runs' directories a variable names (jobs/company.py). With no "..", as above.
NAMED_SQL = r"^\$[A-Z][A-Z0-9_]{0,63}(/[A-Za-z0-9_./-]*)?$"


def variable_of(directory: str) -> str | None:
    """The variable a directory is named by ("$TMPDIR/x" -> "TMPDIR"), or None."""
    named = _NAMED.match(directory)
    return named["variable"] if named and ".." not in directory else None


def shell_word(directory: str) -> str:
    """The directory as one word of a bash script: quoted as it is, or the variable's
    value ("" when unset: the script refuses an empty one) and the quoted path below."""
    named = _NAMED.match(directory)
    if not named or ".." in directory:
        return shlex.quote(directory)
    below = named["below"] or ""
    return f'"${{{named["variable"]}:-}}"' + (shlex.quote(below) if below else "")

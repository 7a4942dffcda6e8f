"""How local passwords are stored.

Argon2id at OWASP's minimum configuration (19 MiB of memory, 2 passes, 1 lane),
which OWASP rates as strong as its other Argon2id settings and stronger than
PBKDF2. A check costs about 20 ms of one core here, against about 230 ms for
Django's PBKDF2: a class of 200 logging in at the start of a course waits for its
pages, not for hashes. Memory-hard, so it costs a GPU attacker more than PBKDF2
did. Passwords stored with PBKDF2 still work and are rehashed at their next login.
"""

from django.contrib.auth.hashers import Argon2PasswordHasher


class Argon2idHasher(Argon2PasswordHasher):
    # Same algorithm name as Django's: its hashes verify here, and a hash stored
    # with other parameters is rehashed with these at the next login.
    time_cost = 2
    memory_cost = 19 * 1024  # KiB
    parallelism = 1

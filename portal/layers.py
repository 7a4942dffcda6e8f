"""The layers of the portal's own apps, lowest first. An app imports its own modules
and those of the layers below it: never one above, never a sibling's (another app
on its own layer), function-level imports included. tests/test_imports.py enforces
it from the source; docs/architecture.md draws it. INSTALLED_APPS' order says
nothing of it. Models may still point anywhere by string foreign key."""

LAYERS: tuple[tuple[str, ...], ...] = (
    ("portal",),  # the house: settings, logins, accounts, units, health
    ("jobs",),  # runs on the cluster
    ("exercises.catalogue",),  # the site: profiles, targets, exercises, references
    ("exercises.weather",),  # the filesystem's weather: canaries and their readings
    # Each builds on the site alone: how full an account is, a trainee's guess, which
    # target suits a workload.
    ("exercises.quotas", "exercises.predictions", "exercises.advisor"),
    ("exercises.courses",),  # courses, and what the class ran and predicted
    ("exercises.lab",),  # starting runs with every rule above, and the lab's pages
    # Each uses what is below, apart: the site's own references, and Check my job.
    ("exercises.calibration", "jobio"),
)

# An installed app of ours with no code to layer: the teaching domain's migration
# history (its apps.py and the migrations that made the tables of the apps above).
MIGRATIONS_ONLY = ("exercises",)

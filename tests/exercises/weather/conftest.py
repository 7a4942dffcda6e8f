# Check my job's fixtures, for the test that reads "slow now" on its page.
from tests.jobio.conftest import tasks_run_at_commit, vsc3  # noqa: F401

from tests.runs import *  # noqa: F403

"""The portal's settings read in a fresh process, with the environment a test gives."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def start_with(**env: str) -> subprocess.CompletedProcess[str]:
    """`manage.py check` in a fresh process with these environment variables."""
    return subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env={**os.environ, "SECRET_KEY": "settings-test", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )

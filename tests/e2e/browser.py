"""What every browser test does: where screenshots go, logging in, asking the advisor."""

from pathlib import Path

from playwright.sync_api import Page, expect

# Screenshots of the pages the tests look at, for a person to look at too.
ARTIFACTS = Path(__file__).parent / "artifacts"


def log_in(page: Page, base_url: str, user, password: str = "pw-Test-1") -> None:
    page.goto(f"{base_url}/login/")
    page.get_by_label("User name").fill(user.username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Welcome, Ada")).to_be_visible()


def ask_the_advisor(
    page: Page, *, data_gib: str, app_gib: str, node_gib: str | None = None
) -> None:
    """The questionnaire, as the course asks it: heavy random I/O on a few large files."""
    page.get_by_role("link", name="Which target?").click()
    page.get_by_label("How does the job read and write?").select_option("random")
    page.get_by_label("Its files are").select_option("few_large")
    page.get_by_label("How much data does it read or write (GiB)?").fill(data_gib)
    if node_gib is not None:  # else the site's, as the form has it
        page.get_by_label("Memory per node (GiB)").fill(node_gib)
    page.get_by_label("Memory the program itself needs (GiB)").fill(app_gib)
    page.get_by_role("button", name="Advise me").click()


def start_runs(page: Page, *target_names: str) -> None:
    """On an exercise's lab page: ticks these targets and starts one run on each."""
    for name in target_names:
        page.get_by_label(name).check()
    page.get_by_role("button", name="Start runs").click()


def expect_runs_completed(page: Page, count: int, timeout_ms: int) -> None:
    """The runs panel shows `count` completed runs, the first with its figure, while
    the page polls: nobody reloads it."""
    panel = page.locator("#runs-panel")
    expect(panel.locator(".status.completed")).to_have_count(count, timeout=timeout_ms)
    expect(panel.locator("tbody tr[data-run] td.num").first).not_to_have_text("–")

"""What every browser test does: where screenshots go, logging in, asking the advisor,
whether a page reads whole on a phone."""

from pathlib import Path

from playwright.sync_api import Page, expect

# Screenshots of the pages the tests look at, for a person to look at too.
ARTIFACTS = Path(__file__).parent / "artifacts"

PHONE = {"width": 390, "height": 844}

# Every text on the page that is shown, line by line, against the screen and against
# each box around it that clips or scrolls what overflows it: what is cut, and by what.
CUT_TEXT = """() => {
  const found = [];
  const range = document.createRange();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const name = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "")
    + (typeof el.className === "string" && el.className
       ? "." + el.className.trim().split(/\\s+/).join(".") : "");
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.textContent.replace(/\\s+/g, " ").trim();
    const el = node.parentElement;
    if (!text || !el.checkVisibility({visibilityProperty: true, opacityProperty: true})) continue;
    range.selectNodeContents(node);
    let why = null;
    for (const r of range.getClientRects()) {
      if (r.width < 1 || r.height < 1) continue;
      if (r.right > window.innerWidth + 1 || r.left < -1) why = "past the screen's edge";
      for (let box = el; box && box !== document.body && !why; box = box.parentElement) {
        const style = getComputedStyle(box);
        const edge = box.getBoundingClientRect();
        const left = edge.left + box.clientLeft, top = edge.top + box.clientTop;
        const outX = r.right > left + box.clientWidth + 1 || r.left < left - 1;
        const outY = r.bottom > top + box.clientHeight + 1 || r.top < top - 1;
        if (style.overflowX !== "visible" && outX || style.overflowY !== "visible" && outY) {
          why = `cut by ${name(box)} (overflow ${style.overflowX} ${style.overflowY})`;
        }
      }
      if (why) break;
    }
    if (why) found.push(`"${text.slice(0, 40)}" in ${name(el)}: ${why}`);
  }
  return found;
}"""


def reads_whole_on_a_phone(page: Page, name: str) -> list[str]:
    """What is cut on this page (after a screenshot of it): nothing, on a good page."""
    page.wait_for_load_state("load")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / f"phone-{name}.png", full_page=True)
    cut = [f"{name}: {what}" for what in page.evaluate(CUT_TEXT)]
    if page.evaluate("document.documentElement.scrollWidth") > PHONE["width"]:
        cut.append(f"{name}: the page is wider than the screen")
    return cut


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
        page.get_by_label(name, exact=True).check()
    page.get_by_role("button", name="Start runs").click()


def expect_runs_completed(page: Page, count: int, timeout_ms: int) -> None:
    """The runs panel shows `count` completed runs, the first with its figure, while
    the page polls: nobody reloads it."""
    panel = page.locator("#runs-panel")
    expect(panel.locator(".status.completed")).to_have_count(count, timeout=timeout_ms)
    expect(panel.locator("tbody tr[data-run] td.num").first).not_to_have_text("–")

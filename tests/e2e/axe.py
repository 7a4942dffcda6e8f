"""axe-core's WCAG 2.2 AA rules on a page in Chromium: the standard every main page is
held to (tests/e2e/test_accessibility.py), at a phone's width and a desk's.

axe-core is npm's package, pinned by package.json and package-lock.json, which
docker/dev/up.sh installs into node_modules/ (AXE_CORE_JS names another copy). A
machine without it fails the test that asks: the standard is not skipped."""

import os
from pathlib import Path

from playwright.sync_api import Page

ROOT = Path(__file__).resolve().parents[2]
AXE = Path(os.getenv("AXE_CORE_JS") or ROOT / "node_modules/axe-core/axe.min.js")
# WCAG 2.0, 2.1 and 2.2 at levels A and AA, as axe-core tags its rules.
WCAG_22_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]

# Each violation's element: the rule, its impact, the element's selector (a frame's,
# then the element's inside it), axe's words for what fails there (a contrast's ratio
# and colours, a target's size) and the start of the element's HTML.
RUN = """async (tags) => {
  const result = await axe.run(document, {
    runOnly: {type: "tag", values: tags}, resultTypes: ["violations"],
  });
  return result.violations.flatMap((rule) => rule.nodes.map((node) => ({
    rule: rule.id,
    impact: node.impact || rule.impact || "",
    target: node.target.flat().join(" "),
    why: [...node.any, ...node.all, ...node.none].map((check) => check.message)
      .filter(Boolean).join("; "),
    html: node.html,
  })));
}"""


def wcag_violations(page: Page) -> list[str]:
    """What axe-core finds against WCAG 2.2 AA on the page as it stands, one line an
    element: `rule (impact) at selector: why: <html…>`. Nothing, on a good page."""
    if not AXE.is_file():
        raise AssertionError(
            f"axe-core is not installed at {AXE}: docker/dev/up.sh installs it "
            "(npm ci --omit=dev --ignore-scripts), or AXE_CORE_JS names a copy"
        )
    # Through the DevTools protocol, once per document: the portal's Content-Security-
    # Policy refuses inline scripts (portal/csp.py), rightly, so no <script> is added.
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(AXE.read_text())
    return [
        f"{found['rule']} ({found['impact']}) at {found['target']}: {found['why']}: "
        f"{_shortened(found['html'])}"
        for found in page.evaluate(RUN, WCAG_22_AA)
    ]


def _shortened(html: str, length: int = 120) -> str:
    html = " ".join(html.split())
    return html if len(html) <= length else html[: length - 1] + "…"

"""A site's published figures in pages: each in the unit it was published in, a
bandwidth with its conversion beside it ("864 MB/s (824 MiB/s)"), and its source as a
numbered note under the table, readable without a mouse.

    {% load references %}
    <td>{% references row rows "lab" %}</td>   {# a row's figures, each cited #}
    ...</table>{% reference_sources rows "lab" %}   {# the notes they cite #}
    {% if rows|any_published %}<th>Site reference…{% endif %}   {# else no column #}
    {% unpublished_note rows %}   {# once a page: why a table has no such column #}
    <td>{% measured row %}</td>   {# the calibration's figure, its round and date #}

`rows` are exercises.figures.Figures; `"lab"` prefixes the notes' ids, so that two
tables on one page keep their own."""

from collections.abc import Iterable, Mapping

from django import template
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from exercises.catalogue.figures import Figures
from exercises.catalogue.models import Metric, ReferenceResult, Unit
from portal.units import MB, MiB

register = template.Library()

# How a row's figures are named when it has more than its write figure.
LABELS = {
    Metric.WRITE: "write",
    Metric.READ: "read",
    Metric.CREATE: "create",
    Metric.STAT: "stat",
    Metric.FILE_READ: "file read",
    Metric.REMOVE: "remove",
}


def _as_published(value: float) -> str:
    """864.0 -> '864', 97.9 -> '97.9', 4577691.0 -> '4,577,691'."""
    return f"{value:,.10g}"


def _converted(value: float) -> str:
    """A conversion, to about three significant figures: no precision it never had."""
    digits = 0 if value >= 100 else 1 if value >= 10 else 2
    return f"{value:,.{digits}f}"


@register.filter
def published(ref: ReferenceResult | None) -> str:
    """'864 MB/s (824 MiB/s)', '925.64 MiB/s (971 MB/s)', '19,795 ops/s'; '–' for none."""
    if ref is None:
        return "–"
    shown = f"{_as_published(ref.value)} {ref.unit}"
    if ref.unit == Unit.MB_S:
        return f"{shown} ({_converted(ref.value * MB / MiB)} MiB/s)"
    if ref.unit == Unit.MIB_S:
        return f"{shown} ({_converted(ref.value * MiB / MB)} MB/s)"
    return shown


def _figures(row: Figures) -> list[ReferenceResult]:
    return [row.published[metric] for metric in Metric if metric in row.published]


def _sources(rows: Iterable[Figures]) -> list[str]:
    """The rows' sources, each once, in the order their figures are shown."""
    sources: list[str] = []
    for row in rows:
        for ref in _figures(row):
            if ref.source and ref.source not in sources:
                sources.append(ref.source)
    return sources


@register.simple_tag
def reference(ref: ReferenceResult | None, rows: Iterable[Figures], prefix: str) -> str:
    """One figure as published, with a link to the note of its source."""
    if ref is None:
        return "–"
    if not ref.source:
        return published(ref)
    number = _sources(rows).index(ref.source) + 1
    return format_html(
        '{}<sup><a href="#{}-source-{}" title="{}">[{}]</a></sup>',
        published(ref),
        prefix,
        number,
        ref.source,
        number,
    )


@register.simple_tag
def references(row: Figures, rows: Iterable[Figures], prefix: str) -> str:
    """All of a row's published figures: a write figure alone as it is, several each
    named ("write 864 MB/s …", "read 880 MB/s …") on a line of its own."""
    figures = _figures(row)
    if not figures:
        return "–"
    if [ref.metric for ref in figures] == [Metric.WRITE]:
        return reference(figures[0], rows, prefix)
    return format_html_join(
        mark_safe("<br>"),
        "{} {}",
        ((LABELS[Metric(ref.metric)], reference(ref, rows, prefix)) for ref in figures),
    )


@register.simple_tag
def reference_sources(rows: Iterable[Figures], prefix: str) -> SafeString | str:
    """The notes the table's figures cite, numbered as they are: what each figure
    was measured with, where and how."""
    sources = _sources(rows)
    if not sources:
        return ""  # none cited; a column with no figure is left out (unpublished_note)
    notes = format_html_join(
        "", '<li id="{}-source-{}">{}</li>', ((prefix, n, s) for n, s in enumerate(sources, 1))
    )
    return format_html(
        '<div class="sources"><p class="muted">Where the site references come from:</p>'
        "<ol>{}</ol></div>",
        notes,
    )


@register.filter
def any_published(rows: Iterable[Figures]) -> bool:
    """Whether a table of these rows has a figure in its "Site reference" column: a
    column with no figure anywhere is left out."""
    return any(_figures(row) for row in rows)


@register.simple_tag
def unpublished_note(tables: Iterable) -> SafeString | str:
    """Once per page, why the tables of `tables` that have no published figure leave
    their "Site reference" column out. `tables`: one table's rows (Figures), or a
    course's chart or charts, each with its "rows"; a metadata table (no such column)
    says none."""
    tables = [tables] if isinstance(tables, Mapping) else list(tables)
    if tables and isinstance(tables[0], Figures):
        tables = [{"rows": tables}]
    bare = [t["rows"] for t in tables if t.get("rates") is None and not any_published(t["rows"])]
    keys = list(dict.fromkeys(row.exercise.key for rows in bare for row in rows))
    if not keys:
        return ""
    if len(keys) == 1:
        named = f"exercise {keys[0]}"
    elif len(bare) == len([t for t in tables if t.get("rates") is None]):
        named = "any exercise on this page"  # every table: no list of them all
    else:
        named = f"exercises {_listed(keys)}"
    return format_html(
        '<p class="muted sources" id="unpublished">The site has published no reference '
        "figures for {}, so no column shows them; what the site measured itself, its last "
        "calibration, is under Measured here.</p>",
        named,
    )


def _listed(keys: list[str]) -> str:
    return f"{', '.join(keys[:-1])} and {keys[-1]}"


@register.simple_tag
def measured(row: Figures) -> SafeString:
    """The site's measured figure (median, lowest-highest) and where it comes from:
    "calibration round 7, 2026-11-26". A figure without its source is one a trainee
    cannot weigh: a round of last year, or one of yesterday's busy afternoon."""
    if row.measured_at is None:
        return format_html("{}", row.measured_text)
    when = f"{timezone.localtime(row.measured_at):%Y-%m-%d}"
    source = f"calibration round {row.measured_round}, {when}" if row.measured_round else when
    return format_html('{}<br><small class="muted">{}</small>', row.measured_text, source)

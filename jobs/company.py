"""What a run shared: the other runs the portal placed on the same target whose time in
Slurm overlapped its own (from its start to its end, or to now while it runs), on the
same node for a run whose directory each node has its own of (BenchmarkRun.node_local).
Runs that follow each other (a user's runs in turn) touch and do not overlap.

The rule is one SQL text (`_overlap`), read two ways: a run's company as an annotation
of any query that reads runs (`company_sql`, read back by `company`): the runs panel,
the export and the lesson get it with the runs they read, at no query of its own; and
the runs themselves, for one run's page (`companions`). Nodes are compared here, in
Python (jobs/slurm/hostlist.py), never by the database or a shell. A run whose nodes
are not known (one that ran before they were recorded) shares no node with any.

What the figure made of it, against the site's quiet figure: exercises/catalogue/quiet.py."""

from collections import defaultdict
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from datetime import timedelta
from functools import lru_cache
from typing import Any

from django.db.models import BooleanField, F, JSONField, QuerySet, When
from django.db.models.expressions import Case, RawSQL
from django.db.models.functions import Coalesce, Now

from jobs.models import IN_SLURM_STATUSES, BenchmarkRun
from jobs.places import NAMED_SQL
from jobs.slurm.hostlist import names

# A job runs at most 24 h (JobSpec.time_limit_minutes), and Slurm lets it finish a few
# minutes past its limit: no run that started longer ago than this before another
# overlaps it. It bounds what the index on (target, started_at) reads.
LONGEST_JOB = timedelta(hours=24, minutes=10)
RUNS = BenchmarkRun._meta.db_table
TARGETS = BenchmarkRun._meta.get_field("target").related_model._meta.db_table
_IN_SLURM = ", ".join(f"'{status.value}'" for status in IN_SLURM_STATUSES)


def _end(run: str) -> str:
    """When the run ended: Slurm's word, now while it is in Slurm, else the portal's
    last word of it (a run lost or cancelled before Slurm said when it ended)."""
    return (
        f"COALESCE({run}.ended_at, CASE WHEN {run}.status IN ({_IN_SLURM}) "
        f"THEN now() ELSE {run}.updated_at END)"
    )


def run_end() -> Coalesce:
    """`_end` for a query of runs through the ORM (the course overview's)."""
    in_slurm = When(status__in=IN_SLURM_STATUSES, then=Now())
    return Coalesce("ended_at", Case(in_slurm, default=F("updated_at")))


def run_node_local() -> RawSQL:
    """BenchmarkRun.node_local for a query of runs through the ORM."""
    return RawSQL(node_local_sql(RUNS), [NAMED_SQL], output_field=BooleanField())  # noqa: S611


def node_local_sql(run: str) -> str:
    """BenchmarkRun.node_local in SQL, for the run `run` (one parameter: NAMED_SQL)."""
    shared = f"SELECT t.shared FROM {TARGETS} t WHERE t.id = {run}.target_id"  # noqa: S608
    return (
        f"({run}.in_memory OR NOT ({shared})"
        f" OR ({run}.target_directory ~ %s AND strpos({run}.target_directory, '..') = 0))"
    )


def _overlap(run: str) -> str:
    """The runs `o` that overlapped the run `run` on its target (one parameter:
    LONGEST_JOB). A run that has not started overlaps none."""
    return (
        f"o.target_id = {run}.target_id AND o.id <> {run}.id"
        f" AND o.started_at >= {run}.started_at - %s"
        f" AND o.started_at < {_end(run)} AND {_end('o')} > {run}.started_at"
    )


def company_sql(run: str = RUNS) -> RawSQL:
    """A run's company as an annotation of a query that reads the runs table as `run`
    (its own name, unless the query names it otherwise): read it with `company`."""
    sql = f"""CASE WHEN {run}.started_at IS NULL THEN NULL ELSE (
        SELECT json_build_object(
            'nodes', {run}.node_names,
            'groups', COALESCE(json_agg(json_build_array(g.mine, g.site, g.nodes, g.n)), '[]')
        )::text
        FROM (
            SELECT o.user_id = {run}.user_id AS mine, o.calibration_id IS NOT NULL AS site,
                   CASE WHEN {node_local_sql(run)} THEN o.node_names END AS nodes,
                   count(*) AS n
            FROM {RUNS} o WHERE {_overlap(run)}
            GROUP BY 1, 2, 3
        ) g
    ) END"""  # noqa: S608 (names of tables and columns, no value)
    return RawSQL(sql, [NAMED_SQL, LONGEST_JOB], output_field=JSONField())  # noqa: S611


def annotated(runs: QuerySet[BenchmarkRun]) -> QuerySet[BenchmarkRun]:
    """The runs, each with its company (`company(run)`), in the same query."""
    return runs.annotate(company_found=company_sql())


@dataclass(frozen=True)
class Company:
    """The other runs that shared a run's target (and node) while it ran."""

    mine: int = 0  # its owner's own
    others: int = 0  # other people's
    site: int = 0  # the site's calibration's

    @property
    def runs(self) -> int:
        return self.mine + self.others + self.site


def company(found: Any) -> Company | None:
    """A run's company from its annotation (company_sql, or a run of `annotated`);
    None for a run that has not started."""
    if isinstance(found, BenchmarkRun):
        found = getattr(found, "company_found", None)
    if not isinstance(found, dict):
        return None
    own = node_set(found.get("nodes") or "")
    counts: dict[str, int] = defaultdict(int)
    for mine, site, nodes, n in found.get("groups") or []:
        if nodes is not None and not own & node_set(nodes):
            continue  # a node of its own, and not this run's
        counts["site" if site else "mine" if mine else "others"] += n
    return Company(**counts)


@lru_cache(maxsize=4096)
def node_set(hostlist: str) -> frozenset[str]:
    """The nodes of a hostlist; none for one that is not (or of too many nodes)."""
    try:
        return names(hostlist)
    except ValueError:
        return frozenset()


def companions(run: BenchmarkRun) -> list[BenchmarkRun]:
    """The runs that shared with `run`, as `company` counts them, earliest first, with
    their users and exercises (1 query)."""
    overlapping = RawSQL(  # noqa: S611 (its values are parameters)
        f"SELECT o.id FROM {RUNS} o, {RUNS} me WHERE me.id = %s AND {_overlap('me')}",  # noqa: S608
        [run.pk, LONGEST_JOB],
    )
    found = (
        BenchmarkRun.objects.filter(id__in=overlapping)
        .select_related("user", "exercise", "target")
        .defer("job_script", "workload", "raw_output")
        .order_by("started_at", "pk")
    )
    if not run.node_local:
        return list(found)
    own = node_set(run.node_names)
    return [other for other in found if own & node_set(other.node_names)]


def most_at_once(runs: Iterable[tuple[float, float, Hashable]]) -> dict[Hashable, int]:
    """Per group: the most runs (of any group) going at one moment while one of the
    group's runs was going. `runs`: (start, end, group), on one target (and node);
    a run ending as another starts is not at once with it."""
    # At one moment, the ends come before the starts.
    events = sorted(
        (
            (moment, starts, group)
            for start, end, group in runs
            for moment, starts in ((start, 1), (end, 0))
        ),
        key=lambda event: event[:2],
    )
    going: dict[Hashable, int] = defaultdict(int)
    most: dict[Hashable, int] = {}
    total = 0
    for _, starts, group in events:
        if not starts:
            going[group] -= 1
            total -= 1
            continue
        going[group] += 1
        total += 1
        for present, count in going.items():
            if count:
                most[present] = max(most.get(present, 0), total)
    return most

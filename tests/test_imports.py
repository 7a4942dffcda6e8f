"""The house (docs/architecture.md): the import graph of the portal's own code, in
which imports only run down the layers declared in portal/layers.py, never between
sibling apps of one layer, and no module imports one that imports it back,
function-level imports included (read from the source, so an import no test runs
counts too); and apps small enough to live in."""

import ast
from collections import Counter
from pathlib import Path

from django.conf import settings

from portal.layers import LAYERS, MIGRATIONS_ONLY

ROOT = Path(__file__).resolve().parents[1]

LAYER_OF = {app: rank for rank, apps in enumerate(LAYERS) for app in apps}
# The top-level packages of our code: those the layers' apps live in.
PACKAGES = tuple(sorted({app.split(".")[0] for app in [*LAYER_OF, *MIGRATIONS_ONLY]}))


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" not in path.parts:
                found[module_name(path)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The portal's modules that `name` imports, wherever in it the import is."""
    found: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            for alias in node.names:
                # `from package import module` imports the module, else a name of base.
                module = f"{base}.{alias.name}"
                found.add(module if module in known else base)
    return {m for m in found if m in known and m != name}


def app_of(name: str) -> str | None:
    """The app a module belongs to: the longest app name it starts with."""
    apps = [app for app in [*LAYER_OF, *MIGRATIONS_ONLY] if f"{name}.".startswith(f"{app}.")]
    return max(apps, key=len, default=None)


def crossings(edges: dict[str, set[str]]) -> list[str]:
    """Every import that breaks the layers: one upward, one between siblings (two
    apps on one layer), and any import by a module outside the layers."""
    found = []
    for name, others in edges.items():
        app = app_of(name)
        for other in others:
            other_app = app_of(other)
            if app == other_app:
                continue
            if app not in LAYER_OF or other_app not in LAYER_OF:
                found.append(f"{name} imports {other}: outside the layers")
            elif LAYER_OF[other_app] > LAYER_OF[app]:
                found.append(f"{name} imports {other}: upward")
            elif LAYER_OF[other_app] == LAYER_OF[app]:
                found.append(f"{name} imports {other}: a sibling")
    return sorted(found)


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def test_every_installed_app_of_ours_has_one_layer() -> None:
    ours = [app for app in settings.INSTALLED_APPS if app.split(".")[0] in PACKAGES]
    declared = [app for apps in LAYERS for app in apps]

    assert len(declared) == len(set(declared)), "an app on two layers"
    assert sorted(ours) == sorted([*declared, *MIGRATIONS_ONLY])


def test_every_module_of_the_portal_is_in_an_app() -> None:
    assert sorted(m for m in graph() if app_of(m) is None) == []


def test_imports_only_run_down_and_never_between_siblings() -> None:
    assert crossings(graph()) == []


def planted(tmp_path: Path, source: str, module: str) -> dict[str, set[str]]:
    """The graph's edges of a module with this source, as if it were `module`."""
    path = tmp_path / "planted.py"
    path.write_text(source)
    return {module: imports(module, path, modules())}


def test_a_planted_upward_import_is_caught(tmp_path: Path) -> None:
    source = "def later():\n    from exercises.lab.start import start_runs\n"

    edges = planted(tmp_path, source, "jobs.sync")

    assert crossings(edges) == ["jobs.sync imports exercises.lab.start: upward"]


def test_a_planted_import_between_siblings_is_caught(tmp_path: Path) -> None:
    source = "from ..predictions import models\n"

    edges = planted(tmp_path, source, "exercises.quotas.checks")

    assert crossings(edges) == [
        "exercises.quotas.checks imports exercises.predictions.models: a sibling"
    ]


def test_a_planted_import_down_the_layers_passes(tmp_path: Path) -> None:
    source = "from exercises.catalogue.models import Exercise\nfrom jobs import slots\n"

    assert crossings(planted(tmp_path, source, "exercises.quotas.checks")) == []


def test_no_module_imports_one_that_imports_it_back() -> None:
    edges = graph()
    circles: set[tuple[str, ...]] = set()

    def walk(name: str, path: list[str]) -> None:
        for other in sorted(edges[name]):
            if other in path:
                circle = path[path.index(other) :]
                start = circle.index(min(circle))
                circles.add(tuple(circle[start:] + circle[:start]))
            elif other not in done:
                walk(other, [*path, other])
        done.add(name)

    done: set[str] = set()
    for name in sorted(edges):
        if name not in done:
            walk(name, [name])
    assert sorted(" -> ".join(c) for c in circles) == []


def test_no_models_module_holds_more_than_six_models() -> None:
    from django.apps import apps

    counts = Counter(
        model.__module__ for model in apps.get_models() if model.__module__.startswith(PACKAGES)
    )
    assert max(counts.values()) <= 6, counts.most_common(3)

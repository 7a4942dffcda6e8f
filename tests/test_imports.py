"""The house (docs/architecture.md): the import graph of the portal's own code, in
which imports only run down the layers and no module imports one that imports it
back, function-level imports included (read from the source, so an import no test
runs counts too); and apps small enough to live in."""

import ast
from collections import Counter
from pathlib import Path

from django.conf import settings

ROOT = Path(__file__).resolve().parents[1]

PACKAGES = ("portal", "jobs", "exercises", "jobio")
# Lowest first, as INSTALLED_APPS lists them: each may import itself and what is above
# it, never below. "exercises" alone holds the teaching domain's migration history.
LAYERS = tuple(
    app for app in settings.INSTALLED_APPS if app.startswith(PACKAGES) and app != "exercises"
)


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


def layer(name: str) -> int | None:
    ranks = [
        i for i, prefix in enumerate(LAYERS) if name == prefix or name.startswith(prefix + ".")
    ]
    return max(ranks, default=None)


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def test_every_module_of_the_portal_is_in_a_layer() -> None:
    # "exercises" alone is the teaching domain's migration history (its apps.py).
    outside = sorted(
        m for m in graph() if layer(m) is None and m not in ("exercises", "exercises.apps")
    )
    assert outside == []


def test_imports_only_run_down() -> None:
    upward = sorted(
        f"{name} imports {other}"
        for name, others in graph().items()
        for other in others
        if (layer(other) or 0) > (layer(name) or 0)
    )
    assert upward == []


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

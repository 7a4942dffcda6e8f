"""Loading a site profile: every shipped profile loads, its references keep their
metric, unit and source, and a profile with a mistake (an engine the portal does not
have, a reference in the wrong unit or of an unknown exercise) is refused whole."""

import io
import re
import tomllib

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError

from exercises.catalogue import lessons, profiles
from exercises.catalogue.models import MeasuredReference, ReferenceResult, SiteProfile
from exercises.catalogue.profiles import PROFILES, load

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("name", sorted(p.stem for p in PROFILES.glob("*.toml")))
def test_every_shipped_profile_loads(name: str) -> None:
    out = io.StringIO()
    call_command("load_site_profile", name, stdout=out)

    assert out.getvalue().startswith(f"site profile {name}:")
    profile = SiteProfile.objects.get(name=name)
    assert profile.engine in ("fio", "ior")
    assert all(e.runs_with in ("fio", "ior", "mdtest") for e in profile.exercises.all())


def test_an_unknown_engine_is_refused_and_nothing_is_stored() -> None:
    data = tomllib.loads((PROFILES / "dev.toml").read_text())
    data["profile"] |= {"name": "typo-site", "engine": "fio3"}

    with pytest.raises(ValidationError, match="fio3"):
        load(data)

    assert not SiteProfile.objects.filter(name="typo-site").exists()


def test_an_exercise_its_engine_cannot_run_is_refused_and_nothing_is_stored() -> None:
    data = tomllib.loads((PROFILES / "dev.toml").read_text())
    data["profile"]["name"] = "ior-small-files"
    small_files = next(e for e in data["exercises"] if e["key"] == "3")
    small_files["engine"] = "ior"  # IOR writes one file per process, not 200

    with pytest.raises(ValidationError, match="many small files need fio"):
        load(data)

    assert not SiteProfile.objects.filter(name="ior-small-files").exists()


def test_the_dev_site_runs_fio_and_names_ior_and_mdtest_where_it_uses_them() -> None:
    call_command("load_site_profile", "dev", stdout=io.StringIO())
    exercises = SiteProfile.objects.get(name="dev").exercises.all()

    engines = {e.key: e.runs_with for e in exercises}

    assert engines["1a"] == engines["3"] == "fio"
    assert engines["1a-ior"] == engines["2b-ior"] == engines["5b"] == "ior"
    assert engines["6"] == "mdtest"
    assert {e.key for e in exercises if e.read_back} == {"5a", "5b"}
    # MPI-IO's two ways with one shared file, its ranks over both nodes.
    assert engines["8a"] == engines["8b"] == "ior"
    spread = {e.key: (e.mpi_io, e.collective, e.nodes) for e in exercises if e.nodes > 1}
    assert spread == {
        "8a": (True, False, 2),
        "8b": (True, True, 2),
        **{key: (False, False, 2) for key in ("10a", "10b", "10c", "10d")},
    }
    # Striping: one shared file and a file each, on one server and spread over both.
    layouts = {e.key: (e.file_per_process, e.spread) for e in exercises if e.key.startswith("10")}
    assert layouts == {
        "10a": (False, False),
        "10b": (False, True),
        "10c": (True, False),
        "10d": (True, True),
    }
    work = SiteProfile.objects.get(name="dev").targets.get(key="work")
    assert work.directory_for("sl-ada", spread=True) == "/gluster-wide/sl-ada"


@pytest.mark.parametrize("name", ["dev", "dkrz"])
def test_dkrzs_compression_table_comes_with_its_source_beside_the_exercise_of_it(name) -> None:
    load(tomllib.loads((PROFILES / f"{name}.toml").read_text()))
    profile = SiteProfile.objects.get(name=name)
    table = {f["algorithm"]: (f["ratio"], f["compress_mb_s"]) for f in profile.compression}
    assert table["lz4"] == (1.923, 1796) and table["zstd"] == (2.326, 658)
    assert len(table) == 7 and table["xz"] == (2.632, 26)
    assert {f["source"] for f in profile.compression} == {
        "DKRZ Lustre talk (2016-09-21): lzbench on a climate data set, MB/s of one core"
    }
    # Its data compresses as the climate data did with zstd: 57 % zeros, 1/2.3.
    assert [e.compressible for e in profile.exercises.all() if e.compressible] == [57]


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"ratio": 0.5}, "ratio 0.5 is not 1 or more"),
        ({"compress_mb_s": -1}, "a speed of -1"),
        ({"source": " "}, "say where the figures come from"),
        ({"level": 3}, "unknown field(s) level"),
    ],
)
def test_a_compression_figure_that_cannot_be_true_is_refused_whole(change, said) -> None:
    data = tomllib.loads((PROFILES / "dkrz.toml").read_text())
    data["profile"]["name"] = "dkrz-mistaken"
    data["compression"][1] |= change
    with pytest.raises(ValueError, match=re.escape(f"compression 2: {said}")):
        load(data)
    assert not SiteProfile.objects.filter(name="dkrz-mistaken").exists()


def test_a_collective_exercise_without_mpi_io_is_refused_and_nothing_is_stored() -> None:
    data = tomllib.loads((PROFILES / "dev.toml").read_text())
    data["profile"]["name"] = "collective-posix"
    next(e for e in data["exercises"] if e["key"] == "8b")["mpi_io"] = False

    with pytest.raises(ValidationError, match="collective calls are MPI-IO's"):
        load(data)

    assert not SiteProfile.objects.filter(name="collective-posix").exists()


# References: each figure keeps its metric, value, unit and source; a mistake in one
# refuses the whole profile.


def test_the_cri_figures_land_with_their_units_and_sources() -> None:
    call_command("load_site_profile", "cri", stdout=io.StringIO())
    refs = ReferenceResult.objects.filter(exercise__profile__name="cri")

    def figure(exercise: str, target: str, metric: str) -> ReferenceResult:
        return refs.get(exercise__key=exercise, target__key=target, metric=metric)

    isilon = figure("ior-fpp", "isilon", "write")
    assert (isilon.value, isilon.unit) == (864, "MB/s")
    assert isilon.mib_s == pytest.approx(823.97, abs=0.01)
    assert "IOR POSIX, 16 nodes, 448 cores, 1 file per process" in isilon.source
    shared_read = figure("ior-shared", "gpfs-scratch", "read")
    assert (shared_read.value, shared_read.unit) == (29911, "MB/s")
    assert "single shared file" in shared_read.source
    stat = figure("mdtest", "gpfs-data", "stat")
    assert (stat.value, stat.unit, stat.mib_s) == (4577691, "ops/s", None)
    mpi_io = figure("ior-shared-mpiio", "isilon", "write")
    assert (mpi_io.value, mpi_io.exercise.mpi_io, mpi_io.exercise.collective) == (12, True, False)
    assert "IOR MPI-IO, 16 nodes, 448 cores, single shared file" in mpi_io.source
    # IOR: 2 layouts x 2 interfaces x write/read x 4 targets; mdtest: 4 x 4
    assert refs.count() == 48
    assert set(refs.values_list("unit", flat=True)) == {"MB/s", "ops/s"}


def test_the_tacc_stripe_figures_are_one_clients_writes_to_work_in_mb_s() -> None:
    call_command("load_site_profile", "tacc", stdout=io.StringIO())
    refs = ReferenceResult.objects.filter(exercise__profile__name="tacc")

    stripes = {
        r.exercise.key: r.value for r in refs.filter(target__key="work").select_related("exercise")
    }

    assert stripes == {"stripe-2": 202, "stripe-4": 380, "stripe-8": 480}
    assert "380-400 MB/s" in refs.get(exercise__key="stripe-4").source
    assert set(refs.values_list("metric", "unit")) == {("write", "MB/s")}


def test_vsc3_keeps_its_write_figures_in_mib_s() -> None:
    call_command("load_site_profile", "vsc3", stdout=io.StringIO())
    refs = ReferenceResult.objects.filter(exercise__profile__name="vsc3")

    assert refs.count() == 20
    assert set(refs.values_list("metric", "unit")) == {("write", "MiB/s")}
    assert refs.get(exercise__key="2a", target__key="tmp").value == 1428.41


def test_loading_again_updates_the_references_and_adds_none() -> None:
    for _ in range(2):
        call_command("load_site_profile", "cri", stdout=io.StringIO())

    assert ReferenceResult.objects.filter(exercise__profile__name="cri").count() == 48


def cri_with(number: int = 0, **changes: object) -> dict:
    """The CRI profile under a new name, its reference `number` changed (a value of
    None removes the field)."""
    data = tomllib.loads((PROFILES / "cri.toml").read_text())
    data["profile"]["name"] = "cri-typo"
    reference = data["references"][number]
    for key, value in changes.items():
        if value is None:
            reference.pop(key)
        else:
            reference[key] = value
    return data


MDTEST_CREATE = 16  # the first mdtest reference of cri.toml, a create rate

BAD_REFERENCES = {
    "a metric that does not exist": (0, {"metric": "writes"}, "metric 'writes' is not one of"),
    "a unit that does not exist": (0, {"unit": "GB/s"}, "unit 'GB/s' is not one of"),
    "a bandwidth in ops/s": (
        0,
        {"unit": "ops/s"},
        "a write bandwidth is given in MiB/s or MB/s, not ops/s",
    ),
    "file creates in MB/s": (MDTEST_CREATE, {"unit": "MB/s"}, "create is counted in ops/s"),
    "a zero figure": (0, {"value": 0}, "value 0 is not a positive figure"),
    "a negative figure": (0, {"value": -864}, "value -864 is not a positive figure"),
    "no number at all": (0, {"value": "fast"}, "value 'fast' is not a number"),
    "not a number": (0, {"value": float("nan")}, "value nan is not a positive figure"),
    "an exercise the profile lacks": (
        0,
        {"exercise": "ior-fp"},
        "no exercise 'ior-fp' in this profile (its exercises: ior-fpp, ior-shared, "
        "ior-fpp-mpiio, ior-shared-mpiio, mdtest)",
    ),
    "a target the profile lacks": (0, {"target": "gpfs"}, "no target 'gpfs' in this profile (its"),
    "no source": (0, {"source": None}, "missing source"),
    "an empty source": (0, {"source": " "}, "say where the figure comes from"),
    "an unknown field": (0, {"write_mb_s": 864}, "unknown field(s) write_mb_s"),
    "a bandwidth of a metadata exercise": (
        MDTEST_CREATE,
        {"metric": "write", "unit": "MB/s"},
        "exercise mdtest measures file operations per second, not write",
    ),
    "file operations of a bandwidth exercise": (
        0,
        {"metric": "stat", "unit": "ops/s"},
        "exercise ior-fpp measures bandwidth, not stat",
    ),
}


@pytest.mark.parametrize("number, changes, message", BAD_REFERENCES.values(), ids=BAD_REFERENCES)
def test_a_bad_reference_is_refused_and_nothing_is_stored(number, changes, message) -> None:
    with pytest.raises(ValueError, match=re.escape(f"reference {number + 1}: {message}")):
        load(cri_with(number, **changes))

    assert not SiteProfile.objects.filter(name="cri-typo").exists()
    assert not ReferenceResult.objects.exists()


def test_a_mistyped_field_of_the_profile_table_is_named() -> None:
    data = cri_with()
    data["profile"]["titel"] = "CRI"

    with pytest.raises(ValueError, match=re.escape("[profile]: unknown field(s) titel")):
        load(data)

    assert not SiteProfile.objects.filter(name="cri-typo").exists()


def test_a_read_figure_of_an_exercise_that_never_reads_is_refused() -> None:
    data = tomllib.loads((PROFILES / "vsc3.toml").read_text())
    data["profile"]["name"] = "vsc3-read"
    data["references"][0] |= {"metric": "read"}

    with pytest.raises(ValueError, match="exercise 1a does not read its data back"):
        load(data)

    assert not SiteProfile.objects.filter(name="vsc3-read").exists()


def test_a_figure_given_twice_is_refused() -> None:
    data = cri_with()
    data["references"].append(dict(data["references"][0], value=900))

    with pytest.raises(ValueError, match="write of ior-fpp on isilon is given twice"):
        load(data)

    assert not SiteProfile.objects.filter(name="cri-typo").exists()


def test_the_command_names_the_file_and_the_mistake(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(profiles, "PROFILES", tmp_path)
    text = (PROFILES / "cri.toml").read_text().replace('unit = "MB/s"', 'unit = "MB/sec"', 1)
    (tmp_path / "cri.toml").write_text(text)

    with pytest.raises(CommandError, match=r"cri.toml: reference 1: unit 'MB/sec' is not one of"):
        call_command("load_site_profile", "cri", stdout=io.StringIO())

    assert not SiteProfile.objects.filter(name="cri").exists()


def test_the_dev_exercises_state_the_lessons_the_lesson_check_counts() -> None:
    call_command("load_site_profile", "dev", stdout=io.StringIO())
    profile = SiteProfile.objects.get(name="dev")
    claims = {
        e.key: [(str(c.faster), str(c.slower), c.factor) for c in lessons.claims_of(e)]
        for e in profile.exercises.all()
        if e.claims
    }

    assert claims == {
        "1a": [("1a/tmp", "1a/global", 1.0), ("1a/global", "1a/home", 1.0)],
        "1b": [("1b/tmp", "1a/tmp", 1.0)],
        "2a": [
            ("2a/tmp", "2a/global", 5.0),
            ("1a/global", "2a/global", 1.0),
            ("1a/scratch", "2a/scratch", 1.0),
            ("2a/binfs", "2a/global", 5.0),
        ],
        "2b": [("2b/tmp", "2b/global", 1.0)],
        "8b": [("8b/work", "8a/work", 1.0)],
        "10b": [("10b/work", "10a/work", 1.2)],
        "10c": [("10c/work", "10a/work", 1.2)],
        "10d": [("10d/work", "10c/work", 1.0)],
        "11a": [
            ("11a/project:written", "11a/project:stored", 1.8),
            ("11a/project", "11b/project", 1.3),
        ],
        "11b": [("11b/project:written", "11b/project:stored", 1.0)],
        "9": [
            ("9/global@1MiB", "9/global@4KiB", 20.0),
            ("9/global@4MiB", "9/global@1MiB", 1.0),
            ("9/tmp@4MiB", "9/tmp@64KiB", 1.0),
        ],
    }
    within = {str(c.faster): c.within for c in lessons.claims_of(profile.exercises.get(key="9"))}
    assert within == {"9/global@1MiB": None, "9/global@4MiB": 1.5, "9/tmp@4MiB": 2.0}
    (flat,) = lessons.claims_of(profile.exercises.get(key="10d"))
    assert flat.within == 1.5
    # Each of fio's runs 2 seconds past the page cache, and says so and why on its page
    # (IOR's, 8b's and 10's, write their data once through; 9 writes each size for 1 s;
    # 11's go through the cache, where the filesystem compresses).
    for key in claims.keys() - {"8b", "9", "10b", "10c", "10d", "11a", "11b"}:
        exercise = profile.exercises.get(key=key)
        assert (exercise.seconds, exercise.direct_io) == (2, True)
        assert "Why this way:" in exercise.measures


CLAIM_MISTAKES = {
    "a target the site lacks": ({"faster": "gpfs", "slower": "global"}, "no target 'gpfs'"),
    "an exercise the site lacks": ({"faster": "9z/tmp", "slower": "tmp"}, "no exercise '9z'"),
    "a side against itself": ({"faster": "tmp", "slower": "1a/tmp"}, "compared with itself"),
    "a factor below 1": ({"factor": 0.5}, "factor 0.5 is not 1 or more"),
    "no lesson in words": ({"text": " "}, "say the lesson in a sentence"),
    "an unknown field": ({"by": 5}, "unknown field(s) by"),
    "a size that is none": ({"faster": "tmp@4kb"}, "'4kb' is not a request size"),
    "a size of no sweep": ({"faster": "tmp@4KiB"}, "'1a' writes no 4 KiB requests of their own"),
    "a size the sweep lacks": ({"faster": "9/tmp@8KiB"}, "'9' writes no 8 KiB requests"),
    "a factor and a within": ({"factor": 2, "within": 1.5}, "a factor (faster) or within"),
    "a within below 1": ({"within": 0.9}, "within 0.9 is not 1 or more"),
}


@pytest.mark.parametrize("changes, message", CLAIM_MISTAKES.values(), ids=CLAIM_MISTAKES.keys())
def test_a_claim_with_a_mistake_is_refused_and_nothing_is_stored(changes, message) -> None:
    data = tomllib.loads((PROFILES / "dev.toml").read_text())
    data["profile"]["name"] = "claims-site"
    exercise = next(e for e in data["exercises"] if e["key"] == "1a")
    exercise["claims"] = [exercise["claims"][0] | changes]

    with pytest.raises(ValueError, match=re.escape(message)):
        load(data)

    assert not SiteProfile.objects.filter(name="claims-site").exists()


def test_a_changed_workload_drops_the_figures_measured_of_the_old_one() -> None:
    call_command("load_site_profile", "dev", stdout=io.StringIO())
    profile = SiteProfile.objects.get(name="dev")
    for key in ("1a", "2a"):
        MeasuredReference.objects.create(
            exercise=profile.exercises.get(key=key),
            target=profile.targets.get(key="tmp"),
            median=100,
            low=90,
            high=110,
        )
    data = tomllib.loads((PROFILES / "dev.toml").read_text())
    next(e for e in data["exercises"] if e["key"] == "1a")["seconds"] = 3
    next(e for e in data["exercises"] if e["key"] == "2a")["how_to_read"] = "Reworded."

    load(data)

    # 1a now measures something else; 2a only reads differently and keeps its figures.
    assert list(MeasuredReference.objects.values_list("exercise__key", flat=True)) == ["2a"]


@pytest.mark.parametrize("name", sorted(p.stem for p in PROFILES.glob("*.toml")))
def test_every_claim_holds_on_the_sites_own_published_figures(name: str) -> None:
    """A lesson a site states must be true of the figures it published."""
    call_command("load_site_profile", name, stdout=io.StringIO())
    profile = SiteProfile.objects.get(name=name)
    published = {
        lessons.Side(ref.exercise.key, ref.target.key): ref.mib_s
        for ref in ReferenceResult.objects.filter(exercise__profile=profile, metric="write")
    }
    claims = [c for e in profile.exercises.all() for c in lessons.claims_of(e)]
    verdicts = lessons.judge(claims, published.get)

    assert [v.claim.text for v in verdicts if v.holds is False] == []
    if name == "vsc3":
        assert len(verdicts) == 7 and all(v.holds for v in verdicts)


def test_vsc3s_tmpdir_is_what_vsc3_says_it_is_the_variable_each_job_gets() -> None:
    # "Accessible with the $TMPDIR environment variable"; "data gets deleted after the job".
    call_command("load_site_profile", "vsc3", stdout=io.StringIO())
    tmp = SiteProfile.objects.get(name="vsc3").targets.get(key="tmp")
    assert (tmp.variable, tmp.directory_for("ada")) == ("TMPDIR", "$TMPDIR")
    assert not tmp.persistent and not tmp.shared


def test_a_targets_purge_is_data_the_preview_and_the_purge_read() -> None:
    dev = load(tomllib.loads((PROFILES / "dev.toml").read_text()))
    tacc = load(tomllib.loads((PROFILES / "tacc.toml").read_text()))
    dkrz = load(tomllib.loads((PROFILES / "dkrz.toml").read_text()))

    scratch = dev.targets.get(key="scratch")
    assert (scratch.purge_days, scratch.purge_by, scratch.purge_exempt) == (14, "access", [])
    assert scratch.purge_rule == "files not accessed for 14 days are removed"
    assert tacc.targets.get(key="work").purge_days == 10
    assert dkrz.targets.get(key="scratch").purge_rule == scratch.purge_rule  # DKRZ's rule
    assert [t.key for t in dkrz.targets.filter(purge_days__isnull=False)] == ["scratch"]
    assert dev.targets.get(key="home").purge_days is None  # no table: no purge by age


@pytest.mark.parametrize(
    "table, message",
    [
        ({"days": 0}, "days must be a whole number of days from 1 to 3650"),
        ({"days": "14"}, "days must be a whole number"),
        ({"days": 14, "by": "birth"}, "by must be one of access, modify"),
        ({"days": 14, "every": "night"}, "unknown field(s) every"),
        ({"days": 14, "exempt": ["keep/*'; rm -rf ~"]}, "may hold letters, digits"),
        ({"days": 14, "exempt": ["../other/*"]}, "must be below the user's directory"),
        ({"days": 14, "exempt": "keep"}, "a list of at most 20 patterns"),
    ],
)
def test_a_bad_purge_table_is_refused_and_nothing_is_stored(table, message) -> None:
    data = tomllib.loads((PROFILES / "dev.toml").read_text())
    data["profile"]["name"] = "purge-typo"
    next(t for t in data["targets"] if t["key"] == "scratch")["purge"] = table

    with pytest.raises(ValueError, match=re.escape(message)):
        load(data)

    assert not SiteProfile.objects.filter(name="purge-typo").exists()


def test_the_dkrz_figures_are_mistrals_single_stream_and_node_in_mb_s() -> None:
    call_command("load_site_profile", "dkrz", stdout=io.StringIO())
    refs = {
        (r.exercise.key, r.target.key): (r.value, r.unit)
        for r in ReferenceResult.objects.filter(exercise__profile__name="dkrz")
    }

    assert refs == {
        ("1", "work"): (1000, "MB/s"),
        ("1", "scratch"): (1000, "MB/s"),
        ("2", "work"): (5900, "MB/s"),
        ("2", "scratch"): (5900, "MB/s"),
    }
    profile = SiteProfile.objects.get(name="dkrz")
    assert profile.targets.get(key="home").quota_bytes == 24 * 10**9
    assert profile.exercises.get(key="2").workload.processes == 24

"""Open OnDemand quota files in and out, Open XDMoD storage out: a site that already
writes OnDemand files is served at once, and bad files are refused without loss."""

import io
import json
import os
import signal
import time
from datetime import UTC, datetime

import pytest
from django.core.management import CommandError, call_command

from exercises.catalogue.models import QuotaCollector, QuotaSource, StorageTarget
from exercises.quotas.models import Quota
from exercises.quotas.ondemand import import_files
from exercises.quotas.store import record_usage
from exercises.quotas.usage import Usage
from portal.units import GiB

pytestmark = pytest.mark.django_db
T1 = datetime(2026, 3, 1, 6, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def ondemand_files_on_the_dev_site(dev_profile) -> None:
    """The dev site, where $HOME has no collector of its own and $GLOBAL relies on
    OnDemand files ($SCRATCH and $TMPDIR keep the local collector)."""
    QuotaSource.objects.filter(target__profile=dev_profile, target__key="home").delete()
    QuotaSource.objects.filter(target__profile=dev_profile, target__key="global").update(
        collector=QuotaCollector.ONDEMAND
    )


def ood_file(tmp_path, quotas: list, timestamp: float = T1.timestamp(), name: str = "q.json"):
    path = tmp_path / name
    path.write_text(json.dumps({"version": 1, "timestamp": timestamp, "quotas": quotas}))
    return str(path)


HOME = {
    "type": "user",
    "user": "sl-ada",
    "path": "/srv/storagelab/home/sl-ada",
    "total_block_usage": 524288,
    "block_limit": 1048576,
    "total_file_usage": 321,
    "file_limit": 0,
}
GLOBAL_FILESET = {
    "type": "fileset",
    "user": "sl-ada",
    "path": "/srv/storagelab/global",
    "block_usage": 1024,
    "total_block_usage": 9437184,
    "block_limit": 10485760,
    "file_usage": 3,
    "total_file_usage": 70000,
    "file_limit": 100000,
}


def test_an_ondemand_file_fills_the_targets_its_paths_cover(
    ada_account, dev_profile, tmp_path
) -> None:
    path = ood_file(tmp_path, [HOME, GLOBAL_FILESET, {**HOME, "user": "stranger"}])
    out, err = io.StringIO(), io.StringIO()

    call_command("import_ondemand_quotas", path, stdout=out, stderr=err)

    home = Quota.objects.get(account=ada_account, target__key="home")
    assert (home.bytes_used, home.bytes_hard, home.files_used) == (GiB // 2, GiB, 321)
    assert home.files_hard is None and home.collected_at == T1 and home.collector == "ondemand"
    fileset = Quota.objects.get(account=ada_account, target__key="global")
    assert (fileset.bytes_used, fileset.bytes_hard) == (9 * GiB, 10 * GiB)  # the fileset's
    assert not Quota.objects.filter(target__key__in=["scratch", "tmp"]).exists()  # local ones
    assert "2 quota figure(s) imported" in out.getvalue()
    assert "1 user(s) in the files have no cluster account here" in err.getvalue()


def test_a_bad_entry_is_named_and_skipped(ada_account, dev_profile, tmp_path) -> None:
    path = ood_file(tmp_path, [{**HOME, "total_block_usage": -5}, GLOBAL_FILESET])
    err = io.StringIO()

    call_command("import_ondemand_quotas", path, stdout=io.StringIO(), stderr=err)

    assert "quotas[0] skipped (total_block_usage: Input should be greater than or equal to 0)" in (
        err.getvalue()
    )
    assert list(Quota.objects.values_list("target__key", flat=True)) == ["global"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "not JSON"),
        ('{"version": 2, "timestamp": 1, "quotas": []}', "not an OnDemand quota file version 1"),
        ('{"version": 1, "quotas": []}', "timestamp: Field required"),
    ],
)
def test_a_bad_file_is_refused_and_nothing_changes(ada_account, tmp_path, text, message) -> None:
    home = StorageTarget.objects.get(profile__name="dev", key="home")
    record_usage(ada_account, home, "local", Usage(bytes_used=7))
    bad = tmp_path / "bad.json"
    bad.write_text(text)

    with pytest.raises(CommandError, match=message):
        call_command("import_ondemand_quotas", ood_file(tmp_path, [HOME]), str(bad))

    assert list(Quota.objects.values_list("bytes_used", flat=True)) == [7]


def test_an_older_file_never_replaces_newer_figures(ada_account, dev_profile, tmp_path) -> None:
    import_files([ood_file(tmp_path, [HOME])], dev_profile)
    older = {**HOME, "total_block_usage": 1}

    result = import_files(
        [ood_file(tmp_path, [older], T1.timestamp() - 60, "old.json")], dev_profile
    )

    assert result.older == 1
    assert Quota.objects.get(account=ada_account, target__key="home").bytes_used == GiB // 2


def test_a_target_relying_on_ondemand_without_an_entry_is_unknown(
    ada_account, dev_profile, tmp_path
):
    import_files([ood_file(tmp_path, [HOME])], dev_profile)

    quota = Quota.objects.get(account=ada_account, target__key="global")
    assert not quota.known and quota.bytes_used is None
    assert quota.error == "no entry for sl-ada in the Open OnDemand quota files"


def test_the_ondemand_export_reads_back_as_the_same_figures(
    ada_account, dev_profile, tmp_path
) -> None:
    import_files([ood_file(tmp_path, [HOME, GLOBAL_FILESET])], dev_profile)
    before = list(Quota.objects.order_by("target__order").values_list("bytes_used", "bytes_hard"))
    exported = tmp_path / "export.json"
    call_command(
        "export_quotas", "--format", "ondemand", "--output", str(exported), stderr=io.StringIO()
    )
    Quota.objects.all().delete()

    call_command("import_ondemand_quotas", str(exported), stdout=io.StringIO())

    data = json.loads(exported.read_text())
    assert data["version"] == 1 and {q["path"] for q in data["quotas"]} == {
        "/srv/storagelab/home/sl-ada",
        "/srv/storagelab/global/sl-ada",
    }
    after = list(Quota.objects.order_by("target__order").values_list("bytes_used", "bytes_hard"))
    assert after == before


def test_the_xdmod_export_has_bytes_per_user_and_mount_point(
    ada_account, dev_profile, tmp_path
) -> None:
    import_files([ood_file(tmp_path, [HOME])], dev_profile)
    out = io.StringIO()

    call_command("export_quotas", "--format", "xdmod", stdout=out)

    assert json.loads(out.getvalue()) == [
        {
            "resource": "home",
            "mountpoint": "/srv/storagelab/home",
            "user": "sl-ada",
            "pi": "sl-ada",
            "dt": "2026-03-01T06:00:00Z",
            "soft_threshold": 0,
            "hard_threshold": GiB,
            "file_count": 321,
            "logical_usage": GiB // 2,
            "physical_usage": GiB // 2,
        }
    ]  # $GLOBAL is unknown (no entry): exports carry current figures only


def test_a_file_that_hangs_costs_one_timeout_and_the_others_are_imported(
    ada_account, dev_profile, tmp_path, settings
) -> None:
    """A FIFO with no writer blocks whoever opens it, as a file on a hung mount does."""
    settings.QUOTA_COMMAND_TIMEOUT = 1
    hung = tmp_path / "hung.json"
    os.mkfifo(hung)
    good = ood_file(tmp_path, [HOME])

    def hung_for_good(signum, frame):
        raise TimeoutError("the import hung on the file that never answers")

    began = time.monotonic()
    previous = signal.signal(signal.SIGALRM, hung_for_good)
    signal.alarm(30)  # the reader before waited in open() for good
    try:
        result = import_files([str(hung), good], dev_profile)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)

    assert time.monotonic() - began < 10
    assert result.stored >= 1
    assert any("not read within 1 s (a hung mount?)" in note for note in result.notes)
    assert Quota.objects.filter(account=ada_account, target__key="home").exists()

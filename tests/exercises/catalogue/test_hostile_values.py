"""What an admin or a site profile can type never reaches a job script or an argv
as shell text: values are refused where they are stored (the model, the admin, the
profile loader) and written safely where they are used."""

import tomllib

import pytest
from django.core.exceptions import ValidationError
from django.test import Client

from exercises.catalogue.models import SiteProfile, StorageTarget
from exercises.catalogue.profiles import PROFILES, load
from jobs.scripts import render_script
from portal.models import ClusterAccount
from tests.runs import make_run

pytestmark = pytest.mark.django_db

PAYLOAD = "touch /tmp/storagelab-pwned"
HOSTILE = {
    "newline": f"$X\n{PAYLOAD}",
    "carriage return": f"$X\r{PAYLOAD}",
    "double quote": 'A"B',
    "single quote": "A'B",
    "command substitution": f"$({PAYLOAD})",
    "backticks": f"`{PAYLOAD}`",
    "semicolon": f"A;{PAYLOAD}",
    "leading dash": "-rf",
}


def dev_data(**target_changes: object) -> dict:
    data = tomllib.loads((PROFILES / "dev.toml").read_text())
    data["profile"]["name"] = "hostile-site"
    data["targets"][0].update(target_changes)
    return data


@pytest.mark.parametrize("name", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_hostile_target_name_is_refused_by_the_model(disk_target, name: str) -> None:
    disk_target.name = name
    with pytest.raises(ValidationError) as refused:
        disk_target.full_clean()
    assert "name" in refused.value.message_dict


@pytest.mark.parametrize("name", ["$GLOBAL", "$TMPDIR", "BeeGFS fast", "GPFS/Data", "Lustre-2"])
def test_plain_target_names_are_accepted(disk_target, name: str) -> None:
    disk_target.name = name
    disk_target.full_clean()


@pytest.mark.parametrize("name", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_hostile_target_name_is_refused_by_the_profile_loader(name: str) -> None:
    with pytest.raises(ValidationError):
        load(dev_data(name=name))
    assert not SiteProfile.objects.filter(name="hostile-site").exists()


@pytest.mark.parametrize(
    "path", [f"/scratch/{{user}}\n{PAYLOAD}", "/scratch/{user}/$(id)", "/s;x/{user}", "-/{user}"]
)
def test_a_hostile_path_template_is_refused_by_the_profile_loader(path: str) -> None:
    with pytest.raises(ValidationError):
        load(dev_data(path_template=path))
    assert not SiteProfile.objects.filter(name="hostile-site").exists()


@pytest.mark.parametrize(
    "path",
    ["$TMPDIR$(id)", "${TMPDIR}", "$TMPDIR/../etc", "$tmpdir", "$TMPDIR;x", "$TMPDIR/{user}/{user}",
     "$TMPDIR/{x}", f"$TMPDIR\n{PAYLOAD}", "$TMPDIR/a b", "$1"],
)  # fmt: skip
def test_a_hostile_variable_template_is_refused(disk_target, path: str) -> None:
    disk_target.path_template = path
    with pytest.raises(ValidationError):
        disk_target.full_clean()


@pytest.mark.parametrize("path", ["$TMPDIR", "$WORK/{user}", "$SITE_SCRATCH/lab/{user}/x"])
def test_a_directory_a_variable_names_on_the_node_is_a_target(disk_target, path: str) -> None:
    disk_target.path_template = path
    disk_target.full_clean()
    assert disk_target.variable == path[1:].split("/")[0]


def test_a_variable_target_reaches_the_script_as_the_variable_not_as_text(
    disk_target, trainee_account
) -> None:
    disk_target.path_template = "$WORK/{user}"
    run = make_run(trainee_account, disk_target)

    script = render_script(run)

    assert f'target_dir="${{WORK:-}}"/{trainee_account.username}\n' in script
    assert 'if [ -z "${WORK:-}" ]; then' in script


def test_a_hostile_exercise_parameter_is_refused_by_the_profile_loader() -> None:
    data = dev_data()
    data["exercises"][0]["block_size"] = f"4096; {PAYLOAD}"
    with pytest.raises((ValidationError, ValueError)):
        load(data)
    assert not SiteProfile.objects.filter(name="hostile-site").exists()


@pytest.mark.parametrize(
    "username", [*HOSTILE.values(), "root\n", "Root"], ids=[*HOSTILE, "nl", "caps"]
)
def test_a_hostile_cluster_account_name_is_refused(make_user, username: str) -> None:
    with pytest.raises(ValidationError):
        ClusterAccount(user=make_user(), username=username).full_clean()


def admin_target_form(site: SiteProfile, name: str) -> dict:
    return {
        "profile": site.pk,
        "key": "fast",
        "name": name,
        "order": 0,
        "filesystem": "BeeGFS",
        "path_template": "/srv/storagelab/scratch/{user}",
        "persistent": "on",
        "shared": "on",
        "use_for": "[]",
        "avoid_for": "[]",
        "purge_by": "access",
        "purge_exempt": "[]",
    }


def test_the_admin_refuses_a_hostile_target_name_and_keeps_a_plain_one(
    client: Client, make_user, site
) -> None:
    client.force_login(make_user(superuser=True))

    for name in HOSTILE.values():
        page = client.post("/admin/catalogue/storagetarget/add/", admin_target_form(site, name))
        assert page.status_code == 200 and "A target name is letters" in page.content.decode()
    assert not StorageTarget.objects.filter(profile=site).exists()

    added = client.post("/admin/catalogue/storagetarget/add/", admin_target_form(site, "BeeGFS"))
    assert added.status_code == 302
    assert StorageTarget.objects.get(profile=site).name == "BeeGFS"


@pytest.mark.parametrize("name", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_name_stored_before_it_was_checked_stays_inside_its_comment(
    make_user, disk_target, name: str
) -> None:
    StorageTarget.objects.filter(pk=disk_target.pk).update(name=name)
    disk_target.refresh_from_db()
    run = make_run(make_user("sl-trainee1").cluster_account, disk_target)

    script = render_script(run)

    # Whatever the name holds, it is on the one comment line that names the target.
    (target_line,) = [line for line in script.splitlines() if "target: " in line]
    assert target_line.startswith("#")
    assert all(PAYLOAD not in line for line in script.splitlines() if line != target_line)


def test_a_directory_known_on_the_node_only_cannot_be_counted_for_quotas() -> None:
    # $TMPDIR is made for each job on its node: no collector here could walk it.
    data = dev_data(path_template="$TMPDIR", quota={"collector": "local"})
    with pytest.raises(ValidationError, match="known on a job's node only"):
        load(data)
    assert not SiteProfile.objects.filter(name="hostile-site").exists()

"""No job runs as a system account: root, accounts below the UID floor and names
the system does not know are refused when linked (the admin included) and again
whenever the portal would act as them at slurmrestd."""

import pwd
import re
from pathlib import Path

import pytest
from django.contrib.admin.models import LogEntry
from django.core.exceptions import ValidationError
from django.test import Client

from jobs.slurm import SlurmAuthError, get_client
from portal.models import ClusterAccount
from tests.cluster import trivial_job

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]

SYSTEM = [p.pw_name for p in pwd.getpwall() if 0 < p.pw_uid < 1000][:1]  # e.g. daemon
REFUSED = {
    "root": "root",
    "system": SYSTEM[0],
    "unknown": "no-such-user-x7",
    # Above the UID floor, yet no person's: Debian's SlurmUser (UID 64030), whose token
    # is one for the whole cluster, and nobody (65534).
    "slurm-user": "slurm",
    "nobody": "nobody",
}


@pytest.mark.parametrize("username", REFUSED.values(), ids=REFUSED.keys())
def test_linking_a_system_or_unknown_account_is_refused(make_user, username: str) -> None:
    with pytest.raises(ValidationError) as refused:
        ClusterAccount(user=make_user(), username=username).full_clean()
    assert "username" in refused.value.message_dict


def test_the_uid_floor_is_a_setting(make_user, cluster_username, settings) -> None:
    account = ClusterAccount(user=make_user(), username=cluster_username)
    account.full_clean()  # a real account above 1000
    settings.CLUSTER_UID_MIN = pwd.getpwnam(cluster_username).pw_uid + 1
    with pytest.raises(ValidationError, match="system account"):
        account.full_clean()


def test_an_account_above_the_uid_ceiling_is_refused(make_user, cluster_username, settings):
    account = ClusterAccount(user=make_user(), username=cluster_username)
    settings.CLUSTER_UID_MAX = pwd.getpwnam(cluster_username).pw_uid - 1

    with pytest.raises(ValidationError, match="outside 1000-"):
        account.full_clean()


def test_slurms_own_user_is_read_from_slurm_conf(
    make_user, cluster_username, settings, tmp_path
) -> None:
    """A site whose SlurmUser is an account in the people's range."""
    conf = tmp_path / "slurm.conf"
    conf.write_text(f"ClusterName=x\n# SlurmUser=root\nslurmuser = {cluster_username}\n")
    settings.SLURM_CONF = str(conf)

    with pytest.raises(ValidationError, match="is a system account .Slurm's own"):
        ClusterAccount(user=make_user(), username=cluster_username).full_clean()


def test_the_admin_refuses_root_and_logs_who_linked_an_account(
    client: Client, make_user, cluster_username
) -> None:
    admin = make_user(superuser=True)
    trainee = make_user()
    client.force_login(admin)

    page = client.post(
        "/admin/portal/clusteraccount/add/", {"user": trainee.pk, "username": "root"}
    )
    assert page.status_code == 200 and "Jobs never run as root" in page.content.decode()
    assert not ClusterAccount.objects.exists()

    added = client.post(
        "/admin/portal/clusteraccount/add/", {"user": trainee.pk, "username": cluster_username}
    )
    assert added.status_code == 302
    entry = LogEntry.objects.get(object_repr=cluster_username)
    assert entry.user == admin
    assert entry.get_change_message() == (
        f"Linked portal login {trainee.username} to cluster account {cluster_username}"
    )


@pytest.mark.parametrize("username", REFUSED.values(), ids=REFUSED.keys())
def test_no_request_acts_as_a_refused_account_even_if_one_was_stored(
    username: str, tmp_path, slurm_client
) -> None:
    """An account stored before the check, or written to the database by hand."""
    client = slurm_client
    requests = []
    client._http.event_hooks["request"] = [requests.append]

    for call in (
        lambda: client.submit(username, trivial_job(tmp_path, "id")),
        lambda: client.jobs(username),
        lambda: client.cancel(username, 1),
    ):
        with pytest.raises(SlurmAuthError, match=f"not acting as {username}"):
            call()

    # Refused before a token was signed or sent (only the version discovery, as the
    # portal's own service user, may have gone out).
    assert all(r.headers["X-SLURM-USER-NAME"] != username for r in requests)
    get_client.cache_clear()


# --- the portal's own identities -------------------------------------------------


def own_identity(kind: str, username: str, settings, monkeypatch) -> None:
    """Makes the real Unix account named `username` one of the portal's own identities."""
    uid = pwd.getpwnam(username).pw_uid
    if kind == "image-user":  # the image's user (UID 65532), where a container runs as another
        settings.PORTAL_UIDS = [uid]
    elif kind == "sandbox":  # the user the Darshan reader drops to
        settings.DARSHAN_SANDBOX_USER = username
    elif kind == "sandbox-by-number":
        settings.DARSHAN_SANDBOX_USER = f"{uid}:{uid}"
    else:  # the user the portal's process runs as (the tests run as root)
        monkeypatch.setattr("portal.accounts.os.geteuid", lambda: uid)


OWN = ["image-user", "sandbox", "sandbox-by-number", "runs-as"]


@pytest.mark.parametrize("kind", OWN)
def test_the_portals_own_identities_are_never_linked(
    kind: str, make_user, cluster_username, settings, monkeypatch
) -> None:
    """A directory that hands the image's UID to a person (LDAP often starts at 10000,
    where the image's user was) would give them the JWT key's owner's jobs."""
    account = ClusterAccount(user=make_user(), username=cluster_username)
    account.full_clean()  # a person's account, before it is one of the portal's
    own_identity(kind, cluster_username, settings, monkeypatch)

    with pytest.raises(ValidationError, match="one of the portal's own identities"):
        account.full_clean()


@pytest.mark.parametrize("kind", OWN)
def test_no_request_acts_as_one_of_the_portals_own_identities(
    kind: str, cluster_username, settings, monkeypatch, tmp_path, slurm_client
) -> None:
    own_identity(kind, cluster_username, settings, monkeypatch)
    requests = []
    slurm_client._http.event_hooks["request"] = [requests.append]

    with pytest.raises(SlurmAuthError, match=f"not acting as {cluster_username}"):
        slurm_client.submit(cluster_username, trivial_job(tmp_path, "id"))
    with pytest.raises(SlurmAuthError, match=f"not acting as {cluster_username}"):
        slurm_client.jobs(cluster_username)
    assert all(r.headers["X-SLURM-USER-NAME"] != cluster_username for r in requests)
    get_client.cache_clear()


def test_the_images_users_are_outside_the_range_people_get() -> None:
    """The image's UIDs (docker/Dockerfile) sit where directories rarely hand out
    numbers: above Debian's 60000, below nobody, as distroless images' "nonroot"."""
    dockerfile = (ROOT / "docker" / "Dockerfile").read_text()
    portal_uid = int(re.search(r"ARG PORTAL_UID=(\d+)", dockerfile)[1])
    sandbox_uid = int(re.search(r"ARG SANDBOX_UID=(\d+)", dockerfile)[1])
    for uid in (portal_uid, sandbox_uid):
        assert 60000 < uid < 65534
    assert "ENV PORTAL_UIDS=${PORTAL_UID}" in dockerfile
    assert "10001" not in dockerfile and "10002" not in dockerfile

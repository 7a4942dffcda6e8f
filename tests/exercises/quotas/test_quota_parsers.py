"""Each quota tool's parser on outputs written in the tool's documented format: plain
figures, no limit, over-quota markers and grace periods, wrapped lines and garbage.
Whatever a parser cannot read is an error, never a zero."""

from datetime import UTC, datetime, timedelta

import pytest

from exercises.quotas.parsers import (
    parse_beegfs_ctl_csv,
    parse_beegfs_list_usage,
    parse_lfs_quota,
    parse_mmlsquota,
    parse_quota,
)
from exercises.quotas.usage import QuotaParseError
from portal.units import GiB, KiB

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)

# --- Lustre: lfs quota -q -u alice /lustre/scratch ------------------------------------------

LFS_UNDER = """\
/lustre/scratch 1048576 4194304 5242880       -    1200  100000  120000       -
"""
LFS_OVER = """\
/lustre/scratch 5242880* 4194304 8388608 6d23h59m57s  150000* 100000  200000 1w2d
"""
LFS_WRAPPED = """\
/lustre/projects/chemistry
                   2048       0       0       -      42       0       0       -
"""


def test_lustre_reads_kib_into_bytes_with_soft_and_hard_limits() -> None:
    usage = parse_lfs_quota(LFS_UNDER, "/lustre/scratch", now=NOW)

    assert usage.bytes_used == 1048576 * KiB == 1 * GiB
    assert (usage.bytes_soft, usage.bytes_hard) == (4 * GiB, 5 * GiB)
    assert (usage.files_used, usage.files_soft, usage.files_hard) == (1200, 100000, 120000)
    assert usage.bytes_grace_ends is None and usage.files_grace_ends is None


def test_lustre_over_quota_stars_are_read_and_the_grace_counts_down() -> None:
    usage = parse_lfs_quota(LFS_OVER, "/lustre/scratch/", now=NOW)

    assert usage.bytes_used == 5 * GiB and usage.files_used == 150000
    assert usage.bytes_grace_ends == NOW + timedelta(days=6, hours=23, minutes=59, seconds=57)
    assert usage.files_grace_ends == NOW + timedelta(weeks=1, days=2)


def test_lustre_expired_grace_is_over_now() -> None:
    output = "/lustre/scratch 5242880* 4194304 8388608 none 10 0 0 -\n"

    assert parse_lfs_quota(output, "/lustre/scratch", now=NOW).bytes_grace_ends == NOW


def test_lustre_zero_limits_mean_no_limit() -> None:
    usage = parse_lfs_quota(LFS_WRAPPED, "/lustre/projects/chemistry", now=NOW)

    assert usage.bytes_used == 2 * 1024 * KiB
    assert usage.bytes_soft is usage.bytes_hard is usage.files_hard is None


def test_lustre_joins_a_long_mount_point_wrapped_onto_its_own_line() -> None:
    both = LFS_UNDER + LFS_WRAPPED

    assert parse_lfs_quota(both, "/lustre/projects/chemistry").files_used == 42
    assert parse_lfs_quota(both, "/lustre/scratch").files_used == 1200


def test_lustre_refuses_figures_it_marks_inaccurate() -> None:
    output = (
        "Some errors happened when getting quota info. Some devices may be not working or "
        'deactivated. The data in "[]" is inaccurate.\n'
        "/lustre/scratch [1048576] 4194304 5242880 - 1200 0 0 -\n"
    )
    with pytest.raises(QuotaParseError, match="inaccurate"):
        parse_lfs_quota(output, "/lustre/scratch")


@pytest.mark.parametrize(
    "garbage",
    [
        "",
        "lfs: quotactl failed: No such device\n",
        "/lustre/scratch lots 0 0 - 12 0 0 -\n",
        "/lustre/scratch 1024 0 0 soon 12 0 0 -\n",
        "/lustre/other 1024 0 0 - 12 0 0 -\n",
    ],
)
def test_lustre_garbage_is_an_error_not_a_zero(garbage: str) -> None:
    with pytest.raises(QuotaParseError):
        parse_lfs_quota(garbage, "/lustre/scratch")


# --- BeeGFS 7: beegfs-ctl --getquota --csv --uid alice ---------------------------------------

BEEGFS_CSV = """\
Quota information for storage pool Default (ID: 1):

name,id,size,hard,files,hard
alice,1001,5368709120,10737418240,1234,unlimited

Quota information for storage pool ssd (ID: 2):

name,id,size,hard,files,hard
alice,1001,4096,unlimited,1,unlimited
"""


def test_beegfs7_reads_bytes_and_files_of_the_first_pool() -> None:
    usage = parse_beegfs_ctl_csv(BEEGFS_CSV, "alice")

    assert (usage.bytes_used, usage.bytes_hard) == (5 * GiB, 10 * GiB)
    assert (usage.files_used, usage.files_hard) == (1234, None)
    assert usage.bytes_soft is None  # BeeGFS has hard limits only


def test_beegfs7_finds_the_user_by_uid_when_the_name_is_not_resolved() -> None:
    output = "name,id,size,hard,files,hard\n1001,1001,1024,unlimited,3,1000\n"

    usage = parse_beegfs_ctl_csv(output, "alice", uid=1001)

    assert (usage.bytes_used, usage.bytes_hard, usage.files_hard) == (1024, None, 1000)


@pytest.mark.parametrize(
    "garbage",
    [
        "",
        "Error: Unable to resolve given name: alice\n",
        "name,id,size,hard,files,hard\nbob,1002,1,2,3,4\n",  # someone else's row only
        "name,id,size,hard,files,hard\nalice,1001,5.00 GiB,unlimited,3,unlimited\n",
        "name,id,used,limit\nalice,1001,1,2\n",
    ],
)
def test_beegfs7_garbage_is_an_error_not_a_zero(garbage: str) -> None:
    with pytest.raises(QuotaParseError):
        parse_beegfs_ctl_csv(garbage, "alice")


# --- BeeGFS 8: beegfs quota list-usage --uids 1001 --raw --output ndjson -------------------

BEEGFS8_NDJSON = """\
{"name":"alice","id":1001,"type":"user","pool":"default","space":"5368709120/10737418240","inode":"1234/∞"}
{"name":"alice","id":1001,"type":"group","pool":"default","space":"1/2","inode":"3/4"}
INFO: Quota usage information is fetched every 30s from the server nodes, thus the displayed values might be slightly out of date.
"""  # noqa: E501 -- one JSON object per line, as the tool prints it


def test_beegfs8_reads_the_user_row_of_ndjson() -> None:
    usage = parse_beegfs_list_usage(BEEGFS8_NDJSON, "alice")

    assert (usage.bytes_used, usage.bytes_hard) == (5 * GiB, 10 * GiB)
    assert (usage.files_used, usage.files_hard) == (1234, None)


def test_beegfs8_reads_the_table_with_human_units() -> None:
    output = (
        "NAME   ID    TYPE  POOL     SPACE             INODE\n"
        "alice  1001  user  default  1.50GiB/10.00GiB  1.23k/∞\n"
    )

    usage = parse_beegfs_list_usage(output, "alice")

    assert (usage.bytes_used, usage.bytes_hard) == (int(1.5 * GiB), 10 * GiB)
    assert (usage.files_used, usage.files_hard) == (1230, None)


def test_beegfs8_int64_max_limit_means_none() -> None:
    row = '{"name":"alice","id":"1001","type":"user","pool":"p","space":"7/9223372036854775807","inode":"1/5"}'  # noqa: E501

    usage = parse_beegfs_list_usage(row, "x", uid=1001)

    assert (usage.bytes_used, usage.bytes_hard, usage.files_hard) == (7, None, 5)


@pytest.mark.parametrize(
    "garbage",
    [
        "WARNING: No information found for the specified ID(s).\n",
        '{"name":"alice","id":1001,"type":"user","pool":"p","space":"?/?","inode":"?/?"}\n',
        '{"name":"alice","id":1001,"type":"user"\n',
        "alice 1001 user default lots/∞ 3/∞\n",
    ],
)
def test_beegfs8_garbage_and_unknown_figures_are_errors(garbage: str) -> None:
    with pytest.raises(QuotaParseError):
        parse_beegfs_list_usage(garbage, "alice")


# --- GPFS / Storage Scale: mmlsquota -Y -u alice gpfs1 ----------------------------------------

MMLSQUOTA_HEADER = (
    "mmlsquota::HEADER:version:reserved:reserved:filesystemName:quotaType:id:name:blockUsage:"
    "blockQuota:blockLimit:blockInDoubt:blockGrace:filesUsage:filesQuota:filesLimit:"
    "filesInDoubt:filesGrace:remarks:quota:defQuota:fid:filesetname:\n"
)
MMLSQUOTA = MMLSQUOTA_HEADER + (
    "mmlsquota::0:1:::gpfs1:USR:1001:alice:9437184:8388608:10485760:0:6%20days:5000:0:0:0:"
    "none:e:on:off:::\n"
    "mmlsquota::0:1:::gpfs2:USR:1001:alice:1024:0:0:0:none:10:0:0:0:none:i:on:off:::\n"
    "mmlsquota::0:1:::gpfs1:USR:1001:alice:2048:4096:8192:0:none:7:100:200:0:none:i:on:off:"
    "12:projects:\n"
)


def test_gpfs_reads_the_device_row_in_kib_with_its_grace() -> None:
    usage = parse_mmlsquota(MMLSQUOTA, "alice", "gpfs1", now=NOW)

    assert usage.bytes_used == 9 * GiB
    assert (usage.bytes_soft, usage.bytes_hard) == (8 * GiB, 10 * GiB)
    assert usage.bytes_grace_ends == NOW + timedelta(days=6)
    assert (usage.files_used, usage.files_soft, usage.files_hard) == (5000, None, None)
    assert usage.files_grace_ends is None  # 'none' is no grace here (unlike lfs)


def test_gpfs_picks_the_device_and_the_fileset() -> None:
    assert parse_mmlsquota(MMLSQUOTA, "alice", "gpfs2").bytes_used == 1024 * KiB
    projects = parse_mmlsquota(MMLSQUOTA, "alice", "gpfs1:projects")
    assert (projects.bytes_used, projects.files_hard) == (2048 * KiB, 200)


def test_gpfs_expired_grace_and_quota_off() -> None:
    expired = MMLSQUOTA_HEADER + (
        "mmlsquota::0:1:::gpfs1:USR:1001:alice:9:8:10:0:expired:1:0:0:0:none::on:off:::\n"
    )
    off = MMLSQUOTA_HEADER + (
        "mmlsquota::0:1:::gpfs1:USR:1001:alice:9:8:10:0:none:1:0:0:0:none::off:off:::\n"
    )

    assert parse_mmlsquota(expired, "alice", "gpfs1", now=NOW).bytes_grace_ends == NOW
    assert parse_mmlsquota(off, "alice", "gpfs1").bytes_hard is None  # limits not enforced


@pytest.mark.parametrize(
    "garbage",
    [
        "",
        "mmlsquota: Command failed. Examine previous error messages to determine cause.\n",
        "mmlsquota::0:1:::gpfs1:USR:1001:alice:9:8:10:0:none:1:0:0:0:none::on:off:::\n",
        MMLSQUOTA_HEADER + "mmlsquota::0:1:::gpfs1:USR:1001:alice:many:8:10:0:none:1:0:0:0\n",
        MMLSQUOTA_HEADER + "mmlsquota::0:1:::gpfs1:GRP:100:staff:9:8:10:0:none:1:0:0:0\n",
        MMLSQUOTA_HEADER + "mmlsquota::0:1:::gpfs1:USR:1001:alice:9\n",
    ],
)
def test_gpfs_garbage_is_an_error_not_a_zero(garbage: str) -> None:
    with pytest.raises(QuotaParseError):
        parse_mmlsquota(garbage, "alice", "gpfs1")


# --- quota -w -p -v -u alice (Linux quota tools, NFS through rquotad) -------------------------

QUOTA_W = """\
Disk quotas for user alice (uid 1001): 
     Filesystem   space   quota   limit   grace   files   quota   limit   grace
nfs.example.org:/export/home 1048576  2097152 3145728       0    4242       0       0       0
      /dev/sdb1    2048       0       0       0      12       0       0       0
"""  # noqa: W291 -- quota prints the trailing space


def test_nfs_quota_reads_the_named_filesystem_in_kib() -> None:
    usage = parse_quota(QUOTA_W, "nfs.example.org:/export/home", now=NOW)

    assert usage.bytes_used == 1 * GiB
    assert (usage.bytes_soft, usage.bytes_hard) == (2 * GiB, 3 * GiB)
    assert (usage.files_used, usage.files_soft, usage.files_hard) == (4242, None, None)
    assert usage.bytes_grace_ends is None  # -p prints 0 for no grace


def test_nfs_quota_over_the_soft_limit_has_its_grace_end_in_epoch_seconds() -> None:
    ends = int((NOW + timedelta(days=5)).timestamp())
    output = f"nfs:/export/home 2500000* 2097152 3145728 {ends} 10 0 0 0\n"

    usage = parse_quota(output, now=NOW)  # the only filesystem there is

    assert usage.bytes_used == 2500000 * KiB
    assert usage.bytes_grace_ends == NOW + timedelta(days=5)


def test_nfs_quota_without_p_and_w_wrapped_with_text_grace() -> None:
    output = (
        "Disk quotas for user alice (uid 1001):\n"
        "     Filesystem  blocks   quota   limit   grace   files   quota   limit   grace\n"
        "nfs.example.org:/export/home\n"
        "                2500000* 2097152 3145728   6days      10       0       0        \n"
    )

    usage = parse_quota(output, "nfs.example.org:/export/home", now=NOW)

    assert usage.bytes_grace_ends == NOW + timedelta(days=6)
    assert usage.files_used == 10 and usage.files_grace_ends is None


def test_nfs_quota_files_over_their_limit_without_p() -> None:
    output = "/dev/sdb1 10 0 0 500* 100 200 13:45\n"

    usage = parse_quota(output, "/dev/sdb1", now=NOW)

    assert usage.files_used == 500 and usage.bytes_grace_ends is None
    assert usage.files_grace_ends == NOW + timedelta(hours=13, minutes=45)


@pytest.mark.parametrize(
    "garbage",
    [
        "Disk quotas for user alice (uid 1001): none\n",
        "quota: Cannot resolve mountpoint path /home: No such file or directory\n",
        QUOTA_W,  # two filesystems and none named: which one is meant?
        "nfs:/export/home 1048576 2097152 3145728 0 many 0 0 0\n",
    ],
)
def test_nfs_quota_garbage_and_ambiguity_are_errors(garbage: str) -> None:
    with pytest.raises(QuotaParseError):
        parse_quota(garbage, "")

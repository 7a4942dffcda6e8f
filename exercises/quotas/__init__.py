"""Quota and storage self-service: how full each user is on each storage target.

- `usage.py`: the figures every collector returns (`Usage`), and the number and grace
  formats the tools share.
- `parsers.py`: one parser per tool's documented output (lfs, beegfs-ctl, beegfs,
  mmlsquota, quota).
- `local.py`: the local collector, a walk of the user's directory (dev cluster, tmpfs).
- `collectors.py`: how each tool is run (argv lists, validated names, timeouts) and where
  the results are stored; failures keep the last good figures and say why.
- `ondemand.py`, `xdmod.py`: Open OnDemand quota files in and out, Open XDMoD storage out.
- `status.py`: what the "My storage" page and the banner show (thresholds 80% / 95%).
- `checks.py`: does a benchmark's data fit in what is left of the quota?

Which collector serves a target is a `QuotaSource`, set by the site profile's
`[targets.quota]` table (`collector = "lustre"`, `filesystem = "/scratch"`) or in the admin.
"""

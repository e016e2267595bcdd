"""BSM audit trails (OpenBSM's format, FreeBSD / macOS / illumos) natively: read trails as
records and tokens, print them as ``praudit`` does, select records as ``auditreduce`` does,
and ask ``au_preselect`` — the engine of ``arbiter bsm``, so the bytes returned are what
``arbiter bsm print`` / ``arbiter bsm reduce`` write.

    from arbiter import bsm
    for r in bsm.records("/var/audit/current"):
        print(r.event_name, r.auid, [t.name for t in r.tokens])
    print(bsm.praudit("trail.bsm", oneline=True, noresolve=True).text)     # praudit -n -l
    sel = bsm.auditreduce(["a.bsm", "b.bsm"], ["-m", "AUE_EXECVE"])        # auditreduce -m
    open("execs.bsm", "wb").write(sel.data)
    bsm.preselect("AUE_OPEN_R", "lo,+fr").selected

``etc`` names the directory of ``audit_event`` / ``audit_class`` / ``audit_control`` /
``audit_user`` (as ``--etc``); by default ``/etc/security`` when it has them, else
OpenBSM's stock files built in. A trail is a path (streamed) or ``bytes``; the functions
taking ``trails`` accept one trail or a list. The work runs without the GIL.
"""

from typing import Iterable, List, Optional, Sequence, Union

from ._native import (  # noqa: F401
    PrintReport,
    ReduceReport,
    TrailError,
    _bsm_digest,
    _bsm_praudit,
    _bsm_preselect,
    _bsm_records,
    _bsm_reduce,
)
from ._native import Record, Selection, Token  # noqa: F401

__all__ = ["PrintReport", "Record", "ReduceReport", "Selection", "Token", "TrailError",
           "auditreduce", "praudit", "preselect", "records"]


def records(trails, *, raw: bool = False, short: bool = False, noresolve: bool = False,
            etc=None, strict: bool = False) -> List[Record]:
    """Every record of ``trails``, in order, with its tokens (``Token.text`` as praudit
    prints the token with ``raw`` (-r), ``short`` (-s), ``noresolve`` (-n)). Where a trail's
    framing breaks, reading stops there as praudit stops (``strict=True`` raises
    ``TrailError`` instead)."""
    return _bsm_records(trails, raw=raw, short=short, noresolve=noresolve, etc=etc,
                        strict=strict)


def praudit(trails, *, oneline: bool = False, raw: bool = False, short: bool = False,
            xml: bool = False, noresolve: bool = False, delim: str = ",", json: bool = False,
            resync: bool = False, check: bool = False, etc=None) -> PrintReport:
    """praudit over ``trails``: ``arbiter bsm print`` with -l (``oneline``), -r, -s, -x, -n,
    -d (``delim``), ``--json``, ``--resync``, ``--check``. ``.data`` holds the bytes it
    writes, ``.problems`` what it reports on standard error."""
    return _bsm_praudit(trails, oneline=oneline, raw=raw, short=short, xml=xml,
                        noresolve=noresolve, delim=delim, json=json, resync=resync,
                        check=check, etc=etc)


def auditreduce(trails, options: Sequence[str] = (), *, etc=None) -> ReduceReport:
    """auditreduce over ``trails`` with its command-line ``options`` (``["-m", "AUE_EXECVE",
    "-u", "1001"]``; -A -a -b -c -d -e -f -g -j -m -o -r -u -v -z and ``--extended``):
    ``.data`` is the trail of selected records, exactly what ``arbiter bsm reduce`` writes.
    Bad options raise ``ValueError``."""
    return _bsm_reduce(trails, list(options), etc=etc)


def preselect(event: Union[int, str], mask: str, *, outcome: str = "success",
              etc=None) -> Optional[Selection]:
    """``au_preselect``: does ``mask`` (audit_control syntax, ``"lo,+fr,-fw,^ex"``) select
    ``event`` (a number or an ``AUE_`` name) for ``outcome`` (``"success"``, ``"failure"``
    or ``"both"``)? None when audit_event does not list the event (libbsm's -1)."""
    return _bsm_preselect(event, mask, outcome=outcome, etc=etc)

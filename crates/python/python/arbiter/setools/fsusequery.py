"""``setools.fsusequery.FSUseQuery``: fs_use_* statements by rule type, file system and
context."""

from sys import modules

from .descriptors import CriteriaDescriptor, CriteriaSetDescriptor
from .mixins import CONTEXT_DEBUG, MatchContext
from .policyrep import FSUseRuletype
from . import query as _query
from .query import PolicyQuery
from . import util as _util


class FSUseQuery(MatchContext, PolicyQuery):
    """Query fs_use_* statements."""

    # What setools logs at DEBUG after its INFO line (see query.log_results).
    _debug_log = (
        "Ruletypes: {0.ruletype}",
        "FS: {0.fs!r}, regex: {0.fs_regex}",
    ) + CONTEXT_DEBUG

    ruletype = CriteriaSetDescriptor(enum_class=FSUseRuletype)
    fs = CriteriaDescriptor("fs_regex")
    fs_regex = False

    def results(self):
        """The matching statements, in the policy's order."""
        if "logging" in modules:  # setools' INFO line (see query.log_results)
            _query.log_results(self, "fs_use_* ")
        policy = self.policy
        sel = policy._labeling("fs_uses")
        fs = self.fs
        if fs and not self.fs_regex and type(fs) is str:
            # A file system by name: one lookup in an index built once per policy.
            sel = _by_key(policy, "fs_uses", sel, lambda f: f.fs).get(fs, [])
        elif fs:
            sel = [f for f in sel if _util.match_regex(f.fs, fs, self.fs_regex)]
        ruletype = self.ruletype
        if ruletype:
            sel = [f for f in sel if f.ruletype in ruletype]
        sel = self._filter_context(sel)
        yield from sel


def _by_key(policy, kind, items, key):
    """``items`` grouped by ``key(item)``, in order, once per policy and ``kind``."""

    def build():
        out = {}
        for i in items:
            out.setdefault(key(i), []).append(i)
        return out

    return policy._table("query_" + kind + "_by_key", build)

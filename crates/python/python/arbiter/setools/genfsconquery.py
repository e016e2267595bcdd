"""``setools.genfsconquery.GenfsconQuery``: genfscon statements by file system, path,
file type (a ``stat`` file type value) and context."""

from sys import modules

from .descriptors import CriteriaDescriptor
from .mixins import CONTEXT_DEBUG, MatchContext
from . import query as _query
from .query import PolicyQuery
from .fsusequery import _by_key
from . import util as _util


class GenfsconQuery(MatchContext, PolicyQuery):
    """Query genfscon statements."""

    # What setools logs at DEBUG after its INFO line (see query.log_results).
    _debug_log = (
        "FS: {0.fs!r}, regex: {0.fs_regex}",
        "Path: {0.path!r}, regex: {0.path_regex}",
        "Filetype: {0.filetype!r}",
    ) + CONTEXT_DEBUG

    filetype = None
    fs = CriteriaDescriptor("fs_regex")
    fs_regex = False
    path = CriteriaDescriptor("path_regex")
    path_regex = False

    def results(self):
        """The matching statements, in the policy's order."""
        if "logging" in modules:  # setools' INFO line (see query.log_results)
            _query.log_results(self, "genfscon ")
        policy = self.policy
        sel = policy._labeling("genfscons")
        fs = self.fs
        if fs and not self.fs_regex and type(fs) is str:
            # A file system by name: one lookup in an index built once per policy.
            sel = _by_key(policy, "genfscons", sel, lambda g: g.fs).get(fs, [])
        elif fs:
            sel = [g for g in sel if _util.match_regex(g.fs, fs, self.fs_regex)]
        path = self.path
        if path:
            sel = [g for g in sel if _util.match_regex(g.path, path, self.path_regex)]
        filetype = self.filetype
        if filetype:
            sel = [g for g in sel if filetype == g.filetype]
        sel = self._filter_context(sel)
        yield from sel

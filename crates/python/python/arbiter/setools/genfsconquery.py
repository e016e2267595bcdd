"""``setools.genfsconquery.GenfsconQuery``: genfscon statements by file system, path,
file type (a ``stat`` file type value) and context."""

from .descriptors import CriteriaDescriptor
from .mixins import MatchContext
from .query import PolicyQuery
from .util import match_regex


class GenfsconQuery(MatchContext, PolicyQuery):
    """Query genfscon statements."""

    filetype = None
    fs = CriteriaDescriptor("fs_regex")
    fs_regex = False
    path = CriteriaDescriptor("path_regex")
    path_regex = False

    def results(self):
        """The matching statements, in the policy's order."""
        for genfs in self.policy.genfscons():
            if self.fs and not match_regex(genfs.fs, self.fs, self.fs_regex):
                continue
            if self.path and not match_regex(genfs.path, self.path, self.path_regex):
                continue
            if self.filetype and not self.filetype == genfs.filetype:
                continue
            if not self._match_context(genfs.context):
                continue
            yield genfs

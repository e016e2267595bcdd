"""``setools.fsusequery.FSUseQuery``: fs_use_* statements by rule type, file system and
context."""

from .descriptors import CriteriaDescriptor, CriteriaSetDescriptor
from .mixins import MatchContext
from .policyrep import FSUseRuletype
from .query import PolicyQuery
from .util import match_regex


class FSUseQuery(MatchContext, PolicyQuery):
    """Query fs_use_* statements."""

    ruletype = CriteriaSetDescriptor(enum_class=FSUseRuletype)
    fs = CriteriaDescriptor("fs_regex")
    fs_regex = False

    def results(self):
        """The matching statements, in the policy's order."""
        for fsu in self.policy.fs_uses():
            if self.ruletype and fsu.ruletype not in self.ruletype:
                continue
            if self.fs and not match_regex(fsu.fs, self.fs, self.fs_regex):
                continue
            if not self._match_context(fsu.context):
                continue
            yield fsu

"""``SELinuxPolicy``'s counts (``type_count``, ``allow_count`` and the rest, the MLS,
labeling and constraint parts' among them): a part of the policy class imported on the
first count asked for (``policyrep._PART_MEMBERS``), as the MLS, labeling and
constraint parts are. Queries never count, and a script that does not either does not
keep these 43 functions' code (about 40 kB)."""

import collections

from .policyrep import ConstraintRuletype


class _CountsPolicy:
    """The counts of ``SELinuxPolicy`` (the Xen part's are in ``_xen``, loaded with the
    Xen statements)."""

    @property
    def typebounds_count(self):
        return sum(1 for _ in self.bounds())

    @property
    def type_count(self):
        return sum(1 for _ in self.types())

    @property
    def type_attribute_count(self):
        return sum(1 for _ in self.typeattributes())

    @property
    def role_count(self):
        return len(self._roles_all())

    @property
    def user_count(self):
        return len(self._users_all())

    @property
    def boolean_count(self):
        return len(self._bools_all())

    @property
    def class_count(self):
        return len(self._classes_all())

    @property
    def common_count(self):
        return len(self._commons_all())

    @property
    def conditional_count(self):
        return self._db.counts()["conditional"]

    @property
    def polcap_count(self):
        return sum(1 for _ in self.polcaps())

    @property
    def permissives_count(self):
        return sum(1 for t in self.types() if t.ispermissive)

    @property
    def role_allow_count(self):
        return self._db.counts()["role_allow"]

    @property
    def role_transition_count(self):
        return self._db.counts()["role_transition"]

    @property
    def range_transition_count(self):
        return self._db.counts()["range_transition"]

    @property
    def permission_count(self):
        return sum(len(c.perms) for c in self.classes()) + sum(
            len(c.perms) for c in self.commons()
        )

    def _te_count(self, kind):
        # One native scan, no rule objects (filename transitions count as type_transition,
        # as setools counts them).
        from .terulequery import TERuleQuery

        return len(TERuleQuery(self, ruletype=[kind])._native(None))

    @property
    def allow_count(self):
        return self._te_count("allow")

    @property
    def auditallow_count(self):
        return self._te_count("auditallow")

    @property
    def dontaudit_count(self):
        return self._te_count("dontaudit")

    @property
    def allowxperm_count(self):
        return self._te_count("allowxperm")

    @property
    def auditallowxperm_count(self):
        return self._te_count("auditallowxperm")

    @property
    def dontauditxperm_count(self):
        return self._te_count("dontauditxperm")

    @property
    def type_transition_count(self):
        return self._te_count("type_transition")

    @property
    def type_change_count(self):
        return self._te_count("type_change")

    @property
    def type_member_count(self):
        return self._te_count("type_member")

    @property
    def neverallow_count(self):
        return 0

    @property
    def neverallowxperm_count(self):
        return 0

    # The MLS, labeling and constraint parts' counts (each loads its part).

    @property
    def category_count(self):
        return len(self._categories_all())

    @property
    def level_count(self):
        return len(self._sensitivities_all())

    @property
    def initialsids_count(self):
        return len(self._labeling("initialsids"))

    @property
    def fs_use_count(self):
        return len(self._labeling("fs_uses"))

    @property
    def genfscon_count(self):
        return len(self._labeling("genfscons"))

    @property
    def portcon_count(self):
        return len(self._labeling("portcons"))

    @property
    def netifcon_count(self):
        return len(self._labeling("netifcons"))

    @property
    def nodecon_count(self):
        return len(self._labeling("nodecons"))

    @property
    def ibpkeycon_count(self):
        return len(self._labeling("ibpkeycons"))

    @property
    def ibendportcon_count(self):
        return len(self._labeling("ibendportcons"))

    def _constraint_counts(self):
        return self._table(
            "constraint_counts",
            lambda: collections.Counter(r.ruletype for r in self.constraints()))

    @property
    def constraint_count(self):
        return self._constraint_counts()[ConstraintRuletype.constrain]

    @property
    def mlsconstraint_count(self):
        return self._constraint_counts()[ConstraintRuletype.mlsconstrain]

    @property
    def validatetrans_count(self):
        return self._constraint_counts()[ConstraintRuletype.validatetrans]

    @property
    def mlsvalidatetrans_count(self):
        return self._constraint_counts()[ConstraintRuletype.mlsvalidatetrans]

    @property
    def default_count(self):
        return sum(1 for _ in self.defaults())

"""The settings and arguments setools 4.4.1's two graph analyses (``dta`` and ``infoflow``)
check alike, checked once here: excluded types are looked up when set (an unknown name
raises at once, as in setools), a path length must be positive, and a query's end types are
looked up before anything is asked of the graph."""


class GraphAnalysis:
    """What ``DomainTransitionAnalysis`` and ``InfoFlowAnalysis`` share: the policy, the
    excluded types, and the checks of a query's arguments."""

    @property
    def exclude(self):
        return self._exclude

    @exclude.setter
    def exclude(self, types):
        self._exclude = [self.policy.lookup_type(t) for t in types] if types else []

    def _endpoints(self, source, target, maxlen=None):
        """The source and target types of a path query; ``maxlen``, when given, must be
        positive (checked first, as setools does)."""
        if maxlen is not None and maxlen < 1:
            raise ValueError("Maximum path length must be positive.")
        return self.policy.lookup_type(source), self.policy.lookup_type(target)

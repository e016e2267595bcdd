"""Pickling of arbiter.setools' objects: every symbol, rule, label and constraint object
a script can reach survives a round trip to another process's view of the same policy
(the policy travels by path, each object as its identity in it), and comes back equal,
with the same text and hash."""

import pickle

import pytest

import arbiter.setools as st
from conftest import DEBIAN_MLS, POLICIES

OWN = ["features.33", "default.33", "tiny.28"]


def objects(p):
    """A few objects of every kind the policy holds (the first three of each iterator)."""
    def first(it, n=3):
        out = []
        for x in it:
            out.append(x)
            if len(out) == n:
                break
        return out

    out = []
    for name in ["types", "typeattributes", "roles", "users", "bools", "classes", "commons",
                 "polcaps", "conditionals", "bounds", "rbacrules", "mlsrules", "constraints",
                 "defaults", "initialsids", "fs_uses", "genfscons", "portcons", "netifcons",
                 "nodecons", "ibpkeycons", "ibendportcons", "sensitivities", "categories",
                 "levels"]:
        out += first(getattr(p, name)())
    for kind in st.TERuletype:
        out += first(st.TERuleQuery(p, ruletype=[kind]).results(), 2)
    extra = []
    for x in out:
        if hasattr(x, "expand") and isinstance(x, st.policyrep.PolicyRule):
            extra += first(x.expand(), 2)
        if hasattr(x, "context"):
            extra.append(x.context)
        if isinstance(x, st.policyrep.BaseConstraint):
            extra.append(x.expression)
        if isinstance(x, st.MLSRule):
            extra += [x.default, x.default.low]
    return out + extra


@pytest.mark.parametrize("name", OWN)
def test_every_kind_of_object_round_trips(name):
    p = st.SELinuxPolicy(str(POLICIES / name))
    objs = objects(p)
    assert len({type(o).__name__ for o in objs}) > 10
    # A second listing (new objects where the policy makes them anew) pickled with the
    # first: both come back in one policy, where each pair must be equal.
    back, again = pickle.loads(pickle.dumps((objs, objects(p))))
    for a, b, c in zip(objs, back, again):
        assert type(a) is type(b), a
        assert str(a) == str(b)
        assert hash(a) == hash(b)
        if not isinstance(a, st.policyrep.FSUse):
            assert b.policy is back[0].policy
        assert b == c


def test_derived_av_rule_keeps_its_permissions():
    p = st.SELinuxPolicy(str(POLICIES / "default.33"))
    rule = next(st.TERuleQuery(p, ruletype=["allow"]).results())
    t = next(rule.source.expand())
    u = next(rule.target.expand())
    d = rule.derive_expanded(t, u, {"read"})
    d2 = pickle.loads(pickle.dumps(d))
    assert d2.perms == frozenset({"read"}) and str(d2) == str(d)


@pytest.mark.skipif(not DEBIAN_MLS.exists(), reason="the Debian MLS policy is not installed")
def test_mls_objects_round_trip_on_debian_mls():
    p = st.SELinuxPolicy(str(DEBIAN_MLS))
    objs = list(p.mlsrules())[:5] + [u.mls_range for u in p.users()] + list(p.levels())[:3]
    back = pickle.loads(pickle.dumps(objs))
    assert [str(x) for x in back] == [str(x) for x in objs]


@pytest.mark.parametrize("name", OWN)
def test_queries_copy_and_pickle_with_their_criteria(name):
    """A query (constructed once, then again from the criteria arbiter kept for the same
    keywords, see ``query._keep_construction``) survives ``copy.copy`` and a pickle round
    trip: the copy answers as the original, and a criterion changed on the copy leaves
    the original and the next construction as they were."""
    import copy

    p = st.SELinuxPolicy(str(POLICIES / name))
    kinds = [
        (st.PolCapQuery, {}, ("name", "nosuch")),
        (st.NodeconQuery, {"ip_version": "ipv4"}, ("ip_version", "ipv6")),
        (st.CommonQuery, {"name": "^f", "name_regex": True}, ("name", "^$")),
        (st.TypeQuery, {"name": "_t$", "name_regex": True}, ("name", "^$")),
    ]
    for cls, kw, (attr, value) in kinds:
        want = [str(r) for r in cls(p, **kw).results()]
        for _ in range(3):
            q = cls(p, **kw)
            for twin in (copy.copy(q), pickle.loads(pickle.dumps(q))):
                assert type(twin) is cls
                assert [str(r) for r in twin.results()] == want
            twin = copy.copy(q)
            setattr(twin, attr, value)
            changed = [str(r) for r in twin.results()]
            assert changed == [str(r) for r in cls(p, **dict(kw, **{attr: value})).results()]
            assert [str(r) for r in q.results()] == want
            assert [str(r) for r in cls(p, **kw).results()] == want


def test_equal_ranges_of_labeling_statements_are_one_value_object(debian_path):
    """A policy's labeling statements repeat a few ranges (the Debian policy's 508 port and
    fs_use contexts have one, ``s0``): one ``Range`` object per distinct range, which
    behaves as a value: equal and hashed as an unshared one, pickled by content."""
    p = st.SELinuxPolicy(str(debian_path))
    ranges = [c.context.range_ for c in p.portcons()] + [c.context.range_ for c in p.fs_uses()]
    texts = {str(r) for r in ranges}
    assert len({id(r) for r in ranges}) == len(texts) < len(ranges)
    for r in {id(r): r for r in ranges}.values():
        fresh = p.lookup_range(str(r))
        assert fresh is not r and fresh == r and hash(fresh) == hash(r)
        # Pickled with an unshared equal range: both come back equal in one policy.
        back, back_fresh = pickle.loads(pickle.dumps((r, fresh)))
        assert back == back_fresh and str(back) == str(r) and hash(back) == hash(r)

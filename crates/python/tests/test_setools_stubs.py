"""The type stub of arbiter.setools.policyrep describes the module as built: every class
of policyrep.pyi exists with its members, and every public class of the module (setools'
classes, not the private helpers) is in the stub."""

import arbiter.setools.policyrep as policyrep
from stubcheck import PKG, missing_from_module, public_classes, read_stub

STUB = PKG / "setools" / "policyrep.pyi"


def has_member(obj, m):
    """setools' members may be enum members, named-tuple fields or slots, or slots of
    every direct subclass (``PolicyObject``'s ``policy``: a class cannot have two bases
    that add to ``object``'s layout, and the symbols' base has the native one)."""
    subclasses = obj.__subclasses__() if isinstance(obj, type) else []
    return (m in getattr(obj, "__members__", {}) or m in getattr(obj, "_fields", ())
            or hasattr(obj, m) or any(m in getattr(k, "__slots__", ()) for k in obj.__mro__)
            or (bool(subclasses) and all(has_member(k, m) for k in subclasses)))


def test_every_stubbed_class_and_member_exists():
    classes, _ = read_stub(STUB, hidden="_")
    assert missing_from_module(policyrep, classes, has_member) == []


def test_every_public_class_is_stubbed():
    classes, _ = read_stub(STUB, hidden="_")
    for name, obj in public_classes(vars(policyrep).items()):
        if issubclass(obj, BaseException) or not obj.__module__.startswith("arbiter.setools"):
            continue
        assert name in classes, name

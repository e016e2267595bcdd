"""The type stubs and docstrings describe the module as built: every name in arbiter.pyi
exists with the same members, and every public class, method and property is documented."""

import arbiter
from stubcheck import (
    PKG,
    missing_from_module,
    public_classes,
    read_stub,
    unstubbed_or_undocumented,
)

STUB = PKG / "__init__.pyi"


def test_every_stubbed_class_and_member_exists():
    classes, _ = read_stub(STUB)
    assert missing_from_module(arbiter, classes) == []


def test_every_public_class_and_member_is_stubbed_and_documented():
    classes, _ = read_stub(STUB)
    problems = []
    for name, obj in public_classes((n, getattr(arbiter, n)) for n in dir(arbiter)):
        problems += unstubbed_or_undocumented(classes, name, obj, "arbiter.pyi")
    assert problems == []

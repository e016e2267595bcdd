"""The stubs of arbiter.bsm, arbiter.landlock and arbiter.build (their .pyi files) describe
the modules as built: every stubbed class and member exists, and every public class and
member of the module is stubbed and documented."""

import importlib
import inspect

import pytest

from stubcheck import PKG, missing_from_module, read_stub, unstubbed_or_undocumented


@pytest.mark.parametrize("module", ["bsm", "landlock", "build"])
def test_stubs_match_the_module(module):
    mod = importlib.import_module("arbiter." + module)
    classes, functions = read_stub(PKG / (module + ".pyi"))
    for f in functions:
        assert callable(getattr(mod, f)) and getattr(mod, f).__doc__, f
    assert missing_from_module(mod, classes) == []
    problems = []
    for name in mod.__all__:
        obj = getattr(mod, name)
        if inspect.isclass(obj):
            problems += unstubbed_or_undocumented(classes, name, obj, module + ".pyi")
        else:
            assert name in functions, name
    assert problems == []

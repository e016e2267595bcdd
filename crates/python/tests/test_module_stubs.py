"""The stubs of arbiter.bsm, arbiter.landlock and arbiter.build (their .pyi files) describe
the modules as built: every stubbed class and member exists, and every public class and
member of the module is stubbed and documented."""

import ast
import importlib
import inspect
import pathlib

import pytest

PKG = pathlib.Path(__file__).resolve().parents[1] / "python" / "arbiter"


def stub(module):
    tree = ast.parse((PKG / (module + ".pyi")).read_text())
    classes, functions = {}, set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            classes[node.name] = {
                n.name for n in node.body
                if isinstance(n, ast.FunctionDef) and not n.name.startswith("__")
            } | {n.target.id for n in node.body
                 if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
        elif isinstance(node, ast.FunctionDef):
            functions.add(node.name)
    return classes, functions


@pytest.mark.parametrize("module", ["bsm", "landlock", "build"])
def test_stubs_match_the_module(module):
    mod = importlib.import_module("arbiter." + module)
    classes, functions = stub(module)
    for f in functions:
        assert callable(getattr(mod, f)) and getattr(mod, f).__doc__, f
    for cls, members in classes.items():
        for m in members:
            assert hasattr(getattr(mod, cls), m), f"{cls}.{m}"
    for name in mod.__all__:
        obj = getattr(mod, name)
        if inspect.isclass(obj):
            assert name in classes and obj.__doc__, name
            if issubclass(obj, BaseException):
                continue
            for member, value in vars(obj).items():
                if not member.startswith("_"):
                    assert member in classes[name], f"{name}.{member} missing from {module}.pyi"
                    assert getattr(value, "__doc__", None), f"{name}.{member} has no docstring"
        else:
            assert name in functions, name

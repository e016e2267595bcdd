"""The type stubs and docstrings describe the module as built: every name in arbiter.pyi
exists with the same members, and every public class, method and property is documented."""

import ast
import inspect
import pathlib

import arbiter

STUB = pathlib.Path(__file__).resolve().parents[1] / "python" / "arbiter" / "__init__.pyi"


def stub_classes():
    tree = ast.parse(STUB.read_text())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            out[node.name] = {
                n.name for n in node.body
                if isinstance(n, ast.FunctionDef) and not n.name.startswith("__")
            } | {
                n.target.id for n in node.body
                if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
            }
    return out


def test_every_stubbed_class_and_member_exists():
    for cls, members in stub_classes().items():
        assert hasattr(arbiter, cls), cls
        for m in members:
            assert hasattr(getattr(arbiter, cls), m), f"{cls}.{m}"


def test_every_public_class_and_member_is_stubbed_and_documented():
    stubs = stub_classes()
    for name in dir(arbiter):
        obj = getattr(arbiter, name)
        if name.startswith("_") or not inspect.isclass(obj):
            continue
        assert name in stubs, name
        assert obj.__doc__, name
        if issubclass(obj, BaseException):
            continue
        for member, value in vars(obj).items():
            if member.startswith("_"):
                continue
            assert member in stubs[name], f"{name}.{member} missing from arbiter.pyi"
            assert getattr(value, "__doc__", None), f"{name}.{member} has no docstring"

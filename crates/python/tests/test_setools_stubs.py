"""The type stub of arbiter.setools.policyrep describes the module as built: every class
of policyrep.pyi exists with its members, and every public class of the module (setools'
classes, not the private helpers) is in the stub."""

import ast
import inspect
import pathlib

import arbiter.setools.policyrep as policyrep

STUB = (pathlib.Path(__file__).resolve().parents[1] / "python" / "arbiter" / "setools"
        / "policyrep.pyi")


def stub_classes():
    out = {}
    for node in ast.parse(STUB.read_text()).body:
        if isinstance(node, ast.ClassDef):
            out[node.name] = {
                n.name for n in node.body
                if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")
            } | {
                n.target.id for n in node.body
                if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
            }
    return out


def test_every_stubbed_class_and_member_exists():
    for cls, members in stub_classes().items():
        assert hasattr(policyrep, cls), cls
        obj = getattr(policyrep, cls)
        for m in members:
            members = getattr(obj, "__members__", {})
            has = m in members or m in getattr(obj, "_fields", ()) or hasattr(obj, m) or m in getattr(obj, "__slots__", ()) or any(
                m in getattr(k, "__slots__", ()) for k in obj.__mro__)
            assert has, f"{cls}.{m}"


def test_every_public_class_is_stubbed():
    stubs = stub_classes()
    for name, obj in vars(policyrep).items():
        if name.startswith("_") or not inspect.isclass(obj):
            continue
        if issubclass(obj, BaseException) or not obj.__module__.startswith("arbiter.setools"):
            continue
        assert name in stubs, name

"""Compares a type stub (.pyi) with the module it describes: the one reader and checker
behind test_stubs.py, test_setools_stubs.py and test_module_stubs.py, so that what counts
as "stubbed" and "documented" is decided once."""

import ast
import inspect
import pathlib

PKG = pathlib.Path(__file__).resolve().parents[1] / "python" / "arbiter"


def read_stub(path, hidden="__"):
    """(classes: {class: member names}, functions: names) of the stub at ``path``; members
    whose names start with ``hidden`` are left out."""
    classes, functions = {}, set()
    for node in ast.parse(pathlib.Path(path).read_text()).body:
        if isinstance(node, ast.ClassDef):
            classes[node.name] = {
                n.name for n in node.body
                if isinstance(n, ast.FunctionDef) and not n.name.startswith(hidden)
            } | {
                n.target.id for n in node.body
                if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
            }
        elif isinstance(node, ast.FunctionDef):
            functions.add(node.name)
    return classes, functions


def missing_from_module(module, classes, has=hasattr):
    """The stubbed classes and members (``Class.member``) the module lacks."""
    missing = []
    for cls, members in classes.items():
        if not hasattr(module, cls):
            missing.append(cls)
            continue
        missing.extend(f"{cls}.{m}" for m in members if not has(getattr(module, cls), m))
    return missing


def unstubbed_or_undocumented(classes, name, obj, stub_name):
    """What is wrong with public class ``obj`` against the stub: absent from it, without a
    docstring, or (exceptions aside) a public member unstubbed or undocumented."""
    if name not in classes:
        return [f"{name} missing from {stub_name}"]
    problems = [] if obj.__doc__ else [f"{name} has no docstring"]
    if issubclass(obj, BaseException):
        return problems
    for member, value in vars(obj).items():
        if member.startswith("_"):
            continue
        if member not in classes[name]:
            problems.append(f"{name}.{member} missing from {stub_name}")
        elif not getattr(value, "__doc__", None):
            problems.append(f"{name}.{member} has no docstring")
    return problems


def public_classes(names_and_objects):
    """The (name, class) pairs whose names are public."""
    return [(n, o) for n, o in names_and_objects if not n.startswith("_") and inspect.isclass(o)]

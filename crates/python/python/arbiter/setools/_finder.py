"""Serving ``setools`` and its submodules from ``arbiter.setools`` in one process.

A finder placed first on ``sys.meta_path`` answers every ``setools`` / ``setools.X``
import with the module ``arbiter.setools`` / ``arbiter.setools.X`` (the same object under
both names), so it wins over a real setools on ``sys.path``. Nothing is installed on disk
under the name ``setools``.
"""

import importlib
import sys
from importlib.machinery import ModuleSpec

# setools 4.4.1 modules not provided yet: importing one fails with a message that says so
# (none left; the mechanism stays for the next module setools adds).
NOT_IMPLEMENTED_MODULES = frozenset()


# The finder and loader follow the import protocol (``find_spec``; ``create_module`` and
# ``exec_module``) without deriving from ``importlib.abc``, whose import pulls in
# ``importlib.resources``, ``tempfile``, ``shutil`` and the compression modules: 1.3 MB
# resident for two base classes that add nothing here.
class _AliasLoader:
    """Loads ``setools.X`` as the already imported ``arbiter.setools.X``."""

    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        return importlib.import_module(self.target)

    def exec_module(self, module):
        pass


class SetoolsFinder:
    """Maps ``setools`` and ``setools.*`` onto ``arbiter.setools``."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "setools" and not fullname.startswith("setools."):
            return None
        sub = fullname[len("setools."):] if fullname != "setools" else ""
        if sub.split(".")[0] in NOT_IMPLEMENTED_MODULES:
            raise ModuleNotFoundError(
                "{0} is not implemented by arbiter.setools yet".format(fullname),
                name=fullname,
            )
        real = "arbiter.setools" + ("." + sub if sub else "")
        # Imported directly rather than looked up first with ``importlib.util.find_spec``
        # (whose import brings ``contextlib`` and ``importlib._abc``): a module that does not
        # exist here is not ours to serve (None), while one that fails to import raises.
        try:
            mod = importlib.import_module(real)
        except ModuleNotFoundError as e:
            if e.name == real:
                return None
            raise
        return ModuleSpec(fullname, _AliasLoader(real), is_package=hasattr(mod, "__path__"))


_FINDER = SetoolsFinder()


def install():
    """Serve ``setools`` from arbiter in this process. Fails (RuntimeError) if another
    setools was imported already, since objects of both would then mix."""
    existing = sys.modules.get("setools")
    if existing is not None and not existing.__name__.startswith("arbiter."):
        raise RuntimeError(
            "the real setools is already imported; call arbiter.setools.install() first"
        )
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


def uninstall():
    """Stop serving ``setools`` (already imported aliases stay in ``sys.modules``)."""
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)

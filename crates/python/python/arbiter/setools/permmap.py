"""setools 4.4.1's ``setools.permmap``: the permission map of information flow analysis.

A map is class name -> permission name -> {direction, weight, enabled}, kept in the file's
order (classes and permissions iterate as setools iterates them). A file is first checked by
the engine's parser (``arbiter_analysis::permmap``, shared with ``arbiter infoflow``), so a
refused file raises ``PermissionMapParseError`` with setools' ``FILE:LINE:reason: token``
wording; an accepted one is then read into the ordered map here. The map stays a mutable
Python object, as in setools (``set_direction``, ``set_weight``, ``exclude_*``).

One difference: a file refused by ``load`` leaves the map empty, where setools leaves the
classes read before the bad line.
"""

import copy
import logging
from collections import OrderedDict
from contextlib import suppress
from typing import NamedTuple

from .. import _native
from . import exception
from .policyrep import TERuletype

INFOFLOW_DIRECTIONS = ("r", "w", "b", "n", "u")
MIN_WEIGHT = 1
MAX_WEIGHT = 10


class RuleWeight(NamedTuple):
    """A rule's read and write weights: the largest of its permissions' in each direction."""

    read: int
    write: int


def validate_weight(weight):
    """A weight setools accepts (1-10), else ``ValueError``."""
    if not MIN_WEIGHT <= weight <= MAX_WEIGHT:
        raise ValueError("Permission weights must be 1-10: {0}".format(weight))
    return weight


def validate_direction(direction):
    """A direction setools accepts (``r w b n u``), else ``ValueError``."""
    if direction not in INFOFLOW_DIRECTIONS:
        raise ValueError("Invalid information flow direction: {0}".format(direction))
    return direction


class _Setting:
    """One setting of a ``Mapping``, read from and written through to the map itself, so
    that every ``Mapping`` of the same permission sees the same values."""

    def __init__(self, key, check):
        self.key = key
        self.check = check

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return obj._perm_map[obj.class_][obj.perm][self.key]

    def __set__(self, obj, value):
        obj._perm_map[obj.class_][obj.perm][self.key] = self.check(value)


class Mapping:
    """A permission's entry in a permission map (weight, direction, enabled)."""

    weight = _Setting("weight", validate_weight)
    direction = _Setting("direction", validate_direction)
    enabled = _Setting("enabled", bool)

    def __init__(self, perm_map, classname, permission, create=False):
        self._perm_map = perm_map
        self.class_ = classname
        self.perm = permission
        if create:
            perm_map.setdefault(classname, OrderedDict())[permission] = {
                "direction": "u", "weight": 1, "enabled": True}
        elif classname not in perm_map:
            raise exception.UnmappedClass("{0} is not mapped.".format(classname))
        elif permission not in perm_map[classname]:
            raise exception.UnmappedPermission("{0}:{1} is not mapped.".format(
                classname, permission))

    def __lt__(self, other):
        return (self.class_, self.perm) < (other.class_, other.perm)


class PermissionMap:
    """A permission map for information flow analysis; without a path, setools' own
    ``perm_map`` from its installed location."""

    def __init__(self, permmapfile=None):
        self.log = logging.getLogger("setools.permmap")
        self._permmap = OrderedDict()
        self._permmapfile = None
        self.load(permmapfile if permmapfile else _native._default_perm_map())

    def __str__(self):
        return self._permmapfile

    def __deepcopy__(self, memo):
        new = PermissionMap.__new__(PermissionMap)
        new.log = self.log
        new._permmap = copy.deepcopy(self._permmap)
        new._permmapfile = self._permmapfile
        memo[id(self)] = new
        return new

    def __iter__(self):
        for cls in self.classes():
            yield from self.perms(cls)

    def load(self, permmapfile):
        """Replaces the map with the file's (``PermissionMapParseError`` if it is refused)."""
        self.log.info("Opening permission map \"{0}\"".format(permmapfile))
        with open(permmapfile, "r") as f:
            text = f.read()  # universal newlines, as setools' line iteration reads it
        self._permmap.clear()
        try:
            _native._check_perm_map(str(permmapfile), text)
        except ValueError as e:
            if str(e) == "list index out of range":  # where setools itself crashes
                raise IndexError(str(e)) from None
            raise exception.PermissionMapParseError(str(e)) from None
        # The text is valid: a class line is followed by its announced number of
        # permission lines (a repeated class is emptied and refilled in place).
        cls, left = None, 0
        counted = False
        for line in text.split("\n"):
            entry = line.split()
            if not entry or entry[0].startswith("#"):
                continue
            if not counted:
                counted = True
            elif left == 0:
                cls, left = entry[1], int(entry[2])
                self._permmap[cls] = OrderedDict()
            else:
                m = Mapping(self._permmap, cls, entry[0], create=True)
                m.direction = entry[1]
                m.weight = int(entry[2])
                left -= 1
        self._permmapfile = permmapfile
        self.log.info("Successfully opened permission map \"{0}\"".format(permmapfile))

    def save(self, permmapfile):
        """Writes the map in setools' format (overwriting the file)."""
        with open(permmapfile, "w") as out:
            out.write(self._text(warn=True))

    def _text(self, warn=False):
        """The map in setools' file format (what ``save`` writes; the analyses hand it to
        the engine)."""
        out = ["{0}\n\n".format(len(self._permmap))]
        for cls, perms in self._permmap.items():
            out.append("class {0} {1}\n".format(cls, len(perms)))
            for perm, s in perms.items():
                if warn and s["direction"] == "u":
                    self.log.warning("Warning: permission {0} in class {1} is unmapped."
                                     .format(perm, cls))
                out.append("{0:>20} {1:>9} {2:>9}\n".format(perm, s["direction"],
                                                           s["weight"]))
            out.append("\n")
        return "".join(out)

    def _excluded(self):
        """The ``(class, permission)`` pairs left out of rule weights."""
        return [(cls, perm) for cls, perms in self._permmap.items()
                for perm, s in perms.items() if not s["enabled"]]

    def classes(self):
        """The mapped class names, in map order."""
        yield from self._permmap.keys()

    def perms(self, class_):
        """The class's permission mappings, in map order (``UnmappedClass`` if none)."""
        if class_ not in self._permmap:
            raise exception.UnmappedClass("{0} is not mapped.".format(class_))
        for perm in list(self._permmap[class_].keys()):
            yield Mapping(self._permmap, class_, perm)

    def mapping(self, class_, perm):
        """One permission's mapping."""
        return Mapping(self._permmap, class_, perm)

    def exclude_class(self, class_):
        """Leaves every permission of the class out of rule weights."""
        for m in self.perms(class_):
            m.enabled = False

    def exclude_permission(self, class_, permission):
        """Leaves one permission out of rule weights."""
        Mapping(self._permmap, class_, permission).enabled = False

    def include_class(self, class_):
        """Counts every permission of the class in rule weights again."""
        for m in self.perms(class_):
            m.enabled = True

    def include_permission(self, class_, permission):
        """Counts one permission in rule weights again."""
        Mapping(self._permmap, class_, permission).enabled = True

    def map_policy(self, policy):
        """Adds an unmapped entry (direction ``u``, weight 1) for every class and permission
        of the policy the map lacks."""
        for class_ in policy.classes():
            name = str(class_)
            self._permmap.setdefault(name, OrderedDict())
            perms = class_.perms
            with suppress(exception.NoCommon):
                perms |= class_.common.perms
            for perm in perms:
                if perm not in self._permmap[name]:
                    Mapping(self._permmap, name, perm, create=True)

    def rule_weight(self, rule):
        """An allow rule's ``RuleWeight`` (``RuleTypeError`` for other rule types;
        ``UnmappedClass``/``UnmappedPermission`` for what the map lacks)."""
        if rule.ruletype != TERuletype.allow:
            raise exception.RuleTypeError("{0} rules cannot be used for calculating a weight"
                                          .format(rule.ruletype))
        read = write = 0
        cls = str(rule.tclass)
        for perm in rule.perms:
            m = Mapping(self._permmap, cls, perm)
            if not m.enabled:
                continue
            if m.direction in ("r", "b"):
                read = max(read, m.weight)
            if m.direction in ("w", "b"):
                write = max(write, m.weight)
        return RuleWeight(read, write)

    def set_direction(self, class_, permission, direction):
        """Sets a permission's flow direction (``r w b n``; ``u`` is accepted too)."""
        Mapping(self._permmap, class_, permission).direction = direction

    def set_weight(self, class_, permission, weight):
        """Sets a permission's weight (1-10)."""
        Mapping(self._permmap, class_, permission).weight = weight

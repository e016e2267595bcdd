"""In-policy labeling of ``setools.policyrep`` on arbiter: ``Context``, ``InitialSID``
and every ``*con`` statement (``FSUse``, ``Genfscon``, ``Portcon``, ``Netifcon``,
``Nodecon``, ``Ibpkeycon``, ``Ibendportcon``) with setools 4.4.1's attributes, ``str()``,
hashing and equality, and the ``SELinuxPolicy`` iterators over them (``_LabelingPolicy``).
The tables come from the native ``labeling_tables`` in the policy's order, as flat
columns (numbers, strings, byte strings, distinct ranges): no tuple per statement, which
dead once the objects were built stayed in CPython's tuple free lists to a script's end."""

import stat

from .. import _native
from .policyrep import (
    FSUseRuletype,
    PolicyObject,
    PortconProtocol,
    PortconRange,
    _Deferred,
    _pickling_getattr,
)

# libsepol's initial SID names, by SID number (setools' SELINUX_SIDNAMES).
SELINUX_SIDNAMES = (
    "undefined", "kernel", "security", "unlabeled", "fs", "file", "file_labels", "init",
    "any_socket", "port", "netif", "netmsg", "node", "igmp_packet", "icmp_socket",
    "tcp_socket", "sysctl_modprobe", "sysctl", "sysctl_fs", "sysctl_kernel", "sysctl_net",
    "sysctl_net_unix", "sysctl_vm", "sysctl_dev", "kmod", "policy", "scmp_packet", "devnull",
)


class Context(PolicyObject):
    """A security context: ``user``, ``role``, ``type_`` and (MLS) ``range_``.

    A context, like a labeling statement, is made once per statement and policy: its
    identity is the object's (setools compares the contexts of two statements as
    different), so it holds no key of its own (a ``(kind, position)`` tuple per statement
    was 34 kB of the Debian policy's labeling); pickling finds its position."""

    __slots__ = ("policy", "user", "role", "type_", "_range")

    def __init__(self, policy, user, role, type_, range_):
        self.policy = policy
        self.user = user
        self.role = role
        self.type_ = type_
        self._range = range_

    _key = _Deferred("_labeling_more")

    __str__ = _Deferred("_labeling_more")

    __reduce__ = _Deferred("_labeling_pickling")

    range_ = _Deferred("_labeling_more")

    statement = _Deferred("_labeling_more")


class Ocontext(PolicyObject):
    """Base of the labeling statements: a ``context``; the table it is in (``_kind``)."""

    __slots__ = ("policy", "context")

    # The policy's table of the statements of this kind (``_labeling``'s name for it).
    _kind = None

    _key = _Deferred("_labeling_more")

    __str__ = _Deferred("_labeling_more")

    __reduce__ = _Deferred("_labeling_pickling")


class InitialSID(Ocontext):
    """An initial SID: ``str()`` is its name."""

    __slots__ = ("name",)
    _kind = "initialsids"

    def __init__(self, policy, sid, context):
        self.policy = policy
        self.context = context
        self.name = SELINUX_SIDNAMES[sid]

    __str__ = _Deferred("_labeling_more")

    statement = _Deferred("_labeling_more")


class FSUse(Ocontext):
    """``fs_use_xattr|fs_use_trans|fs_use_task FS CONTEXT;``"""

    __slots__ = ("ruletype", "fs")
    _kind = "fs_uses"

    def __init__(self, policy, behavior, fs, context):
        self.policy = policy
        self.ruletype = FSUseRuletype(behavior)
        self.fs = fs
        self.context = context

    _key = _Deferred("_labeling_more")

    __hash__ = _Deferred("_labeling_more")

    statement = _Deferred("_labeling_more")


class GenfsFiletype(int):
    """A genfscon file type: a ``stat`` file type value whose ``str()`` is the genfscon
    flag (``--``, ``-d``...; empty for any type)."""

    _filetype_to_text = {
        0: "",
        stat.S_IFBLK: "-b",
        stat.S_IFCHR: "-c",
        stat.S_IFDIR: "-d",
        stat.S_IFIFO: "-p",
        stat.S_IFREG: "--",
        stat.S_IFLNK: "-l",
        stat.S_IFSOCK: "-s",
    }

    __str__ = _Deferred("_labeling_more")


class Genfscon(Ocontext):
    """``genfscon FS PATH [FILETYPE] CONTEXT``"""

    __slots__ = ("fs", "path", "filetype", "tclass")
    _kind = "genfscons"

    _sclass_to_stat = {
        "dir": stat.S_IFDIR,
        "file": stat.S_IFREG,
        "lnk_file": stat.S_IFLNK,
        "fifo_file": stat.S_IFIFO,
        "sock_file": stat.S_IFSOCK,
        "blk_file": stat.S_IFBLK,
        "chr_file": stat.S_IFCHR,
    }

    def __init__(self, policy, fs, path, tclass, context):
        self.policy = policy
        self.fs = fs
        self.path = path
        self.context = context
        self.tclass = None
        self.filetype = GenfsFiletype(0)
        if tclass is not None:
            try:
                self.filetype = GenfsFiletype(self._sclass_to_stat[tclass.name])
                self.tclass = tclass
            except KeyError:
                import logging  # only for this warning: loading it costs 1 MB resident

                logging.getLogger("setools.policyrep").warning(
                    "Genfscon {} {} object class {} does not match a file object class. "
                    "Dropping file type.".format(fs, path, tclass.name))

    __hash__ = _Deferred("_labeling_more")

    statement = _Deferred("_labeling_more")


class Portcon(Ocontext):
    """``portcon PROTOCOL PORT[-PORT] CONTEXT``"""

    __slots__ = ("ports", "protocol")
    _kind = "portcons"

    def __init__(self, policy, protocol, low, high, context):
        self.policy = policy
        self.ports = PortconRange(low, high)
        self.protocol = PortconProtocol(protocol)
        self.context = context

    __hash__ = _Deferred("_labeling_more")

    statement = _Deferred("_labeling_more")


class Netifcon(Ocontext):
    """``netifcon NAME CONTEXT PACKET_CONTEXT``"""

    __slots__ = ("netif", "packet")
    _kind = "netifcons"

    def __init__(self, policy, netif, context, packet):
        self.policy = policy
        self.netif = netif
        self.context = context
        self.packet = packet

    __hash__ = _Deferred("_labeling_more")

    statement = _Deferred("_labeling_more")


class Nodecon(Ocontext):
    """``nodecon ADDRESS NETMASK CONTEXT``; ``network`` is an ``ipaddress`` network."""

    __slots__ = ("ip_version", "network")
    _kind = "nodecons"

    __init__ = _Deferred("_labeling_more")

    __hash__ = _Deferred("_labeling_more")

    statement = _Deferred("_labeling_more")


class Ibpkeycon(Ocontext):
    """``ibpkeycon SUBNET_PREFIX PKEY[-PKEY] CONTEXT``"""

    __slots__ = ("subnet_prefix", "pkeys")
    _kind = "ibpkeycons"

    __init__ = _Deferred("_labeling_more")

    __hash__ = _Deferred("_labeling_more")

    statement = _Deferred("_labeling_more")


class Ibendportcon(Ocontext):
    """``ibendportcon DEVICE PORT CONTEXT``"""

    __slots__ = ("name", "port")
    _kind = "ibendportcons"

    __init__ = _Deferred("_labeling_more")

    __hash__ = _Deferred("_labeling_more")

    statement = _Deferred("_labeling_more")


# libsepol's target_platform for a Xen policy, and the Xen tables (whose objects are the
# ``_xen`` module's, loaded for them).
_XEN = 1
_XEN_TABLES = frozenset(("pirqcons", "iomemcons", "ioportcons", "pcidevicecons", "devicetreecons"))


class _LabelingPolicy:
    """The labeling part of ``SELinuxPolicy``: iterators, lookups and counts."""

    def _labeling(self, kind):
        """The objects of one labeling table, built on first use from that table's rows
        alone (read per kind: the rows of every table at once set a peak that Python's
        allocator kept as free blocks to the end of a script)."""
        return self._table(
            "labeling_" + kind,
            lambda: self._build_labeling(kind, _native.labeling_tables(self._db, kind)[kind]))

    def _contexts(self, ranges):
        """A function making the ``Context`` of the four numbers at a position of a
        table's numbers (user, role and type values, range position plus one)."""
        users = self._table("user_by_value", lambda: {x._value: x for x in self._users_all()})
        roles, types = self._role_by_value, self._type_by_value
        built = [self._range(rg) for rg in ranges] if self.mls else ()

        def ctx(nums, i):
            rg = nums[i + 3]
            return Context(self, users[nums[i]], roles[nums[i + 1]], types[nums[i + 2]],
                           built[rg - 1] if rg and built else None)

        return ctx

    def _is_xen(self):
        target = self._table("target_platform_number",
                             lambda: _native.labeling_tables(self._db, "target")["target"])
        return target == _XEN

    def _build_labeling(self, kind, table):
        """A table's objects from its flat columns (the native ``labeling_tables``): per
        statement a fixed count of numbers, and of strings or byte strings."""
        if kind in _XEN_TABLES:
            from ._xen import _xen_statements

            return _xen_statements(self, kind, table)
        ints, strs, blobs, ranges = table
        nums = memoryview(ints).cast("Q")
        ctx = self._contexts(ranges)
        out = []
        if kind == "initialsids":
            for i in range(0, len(nums), 5):
                out.append(InitialSID(self, nums[i], ctx(nums, i + 1)))
            if self._is_xen():
                from ._xen import _name_xen_sids

                _name_xen_sids(out, nums[::5])
        elif kind == "fs_uses":
            for n, i in enumerate(range(0, len(nums), 5)):
                out.append(FSUse(self, nums[i], strs[n], ctx(nums, i + 1)))
        elif kind == "genfscons":
            classes = self._class_by_value
            for n, i in enumerate(range(0, len(nums), 5)):
                cls = classes.get(nums[i]) if nums[i] else None
                out.append(Genfscon(self, strs[2 * n], strs[2 * n + 1], cls, ctx(nums, i + 1)))
        elif kind == "portcons":
            for i in range(0, len(nums), 7):
                out.append(Portcon(self, nums[i], nums[i + 1], nums[i + 2], ctx(nums, i + 3)))
        elif kind == "netifcons":
            for n, i in enumerate(range(0, len(nums), 8)):
                out.append(Netifcon(self, strs[n], ctx(nums, i), ctx(nums, i + 4)))
        elif kind == "nodecons":
            for n, i in enumerate(range(0, len(nums), 5)):
                out.append(Nodecon(self, nums[i], blobs[2 * n], blobs[2 * n + 1],
                                   ctx(nums, i + 1)))
        elif kind == "ibpkeycons":
            for n, i in enumerate(range(0, len(nums), 6)):
                out.append(Ibpkeycon(self, blobs[n], nums[i], nums[i + 1], ctx(nums, i + 2)))
        elif kind == "ibendportcons":
            for n, i in enumerate(range(0, len(nums), 5)):
                out.append(Ibendportcon(self, strs[n], nums[i], ctx(nums, i + 1)))
        nums.release()
        return out

    initialsids = _Deferred("_labeling_more")

    fs_uses = _Deferred("_labeling_more")

    genfscons = _Deferred("_labeling_more")

    portcons = _Deferred("_labeling_more")

    netifcons = _Deferred("_labeling_more")

    nodecons = _Deferred("_labeling_more")

    ibpkeycons = _Deferred("_labeling_more")

    ibendportcons = _Deferred("_labeling_more")

    lookup_initialsid = _Deferred("_labeling_more")


# The pickling of this part's objects is in ``_labeling_pickling`` (``policyrep._Deferred`` gives
# the ``__reduce__`` methods on first use); pickles name its rebuilding functions as this
# module's, which serves them here.
__getattr__ = _pickling_getattr(globals(), "_labeling_pickling", frozenset((
    "_context_at",
    "_context_ident",
    "_ocontext_at")))

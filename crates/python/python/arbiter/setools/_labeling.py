"""In-policy labeling of ``setools.policyrep`` on arbiter: ``Context``, ``InitialSID``
and every ``*con`` statement (``FSUse``, ``Genfscon``, ``Portcon``, ``Netifcon``,
``Nodecon``, ``Ibpkeycon``, ``Ibendportcon``) with setools 4.4.1's attributes, ``str()``,
hashing and equality, and the ``SELinuxPolicy`` iterators over them (``_LabelingPolicy``).
The tables come from the native ``labeling_tables`` in the policy's order, as flat
columns (numbers, strings, byte strings, distinct ranges): no tuple per statement, which
dead once the objects were built stayed in CPython's tuple free lists to a script's end."""

import itertools
import stat

from .. import _native
from ._mls import Listing
from . import exception as _exc
from .policyrep import (
    FSUseRuletype,
    NodeconIPVersion,
    PolicyObject,
    PortconProtocol,
    PortconRange,
    _made,
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

    def _key(self):
        return id(self)

    def __str__(self):
        if self._range:
            return "{0.user}:{0.role}:{0.type_}:{0.range_}".format(self)
        return "{0.user}:{0.role}:{0.type_}".format(self)

    __reduce__ = _Deferred("_labeling_pickling")

    @property
    def range_(self):
        """The context's range (``MLSDisabled`` without MLS)."""
        if self._range:
            return self._range
        raise _exc.MLSDisabled

    def statement(self):
        raise _exc.NoStatement


class Ocontext(PolicyObject):
    """Base of the labeling statements: a ``context``; the table it is in (``_kind``)."""

    __slots__ = ("policy", "context")

    # The policy's table of the statements of this kind (``_labeling``'s name for it).
    _kind = None

    def _key(self):
        # One object per statement and policy (``_labeling``): its identity is the object's.
        return id(self)

    def __str__(self):
        return self.statement()

    __reduce__ = _Deferred("_labeling_pickling")


class InitialSID(Ocontext):
    """An initial SID: ``str()`` is its name."""

    __slots__ = ("name",)
    _kind = "initialsids"

    def __init__(self, policy, sid, context):
        self.policy = policy
        self.context = context
        self.name = SELINUX_SIDNAMES[sid]

    def __str__(self):
        return self.name

    def statement(self):
        return "sid {0} {0.context}".format(self)


class FSUse(Ocontext):
    """``fs_use_xattr|fs_use_trans|fs_use_task FS CONTEXT;``"""

    __slots__ = ("ruletype", "fs")
    _kind = "fs_uses"

    def __init__(self, policy, behavior, fs, context):
        self.policy = policy
        self.ruletype = FSUseRuletype(behavior)
        self.fs = fs
        self.context = context

    def _key(self):
        # setools never sets an FSUse's identity, so any two compare equal.
        return 0

    def __hash__(self):
        return hash("{0.ruletype}|{0.fs}".format(self))

    def statement(self):
        return "{0.ruletype} {0.fs} {0.context};".format(self)


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

    def __str__(self):
        return self._filetype_to_text[self]


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

    def __hash__(self):
        return hash("genfscon|{0.fs}|{0.path}|{0.filetype}".format(self))

    def statement(self):
        return "genfscon {0.fs} {0.path} {0.filetype} {0.context}".format(self)


class Portcon(Ocontext):
    """``portcon PROTOCOL PORT[-PORT] CONTEXT``"""

    __slots__ = ("ports", "protocol")
    _kind = "portcons"

    def __init__(self, policy, protocol, low, high, context):
        self.policy = policy
        self.ports = PortconRange(low, high)
        self.protocol = PortconProtocol(protocol)
        self.context = context

    def __hash__(self):
        return hash("portcon|{0.protocol}|{1.low}|{1.high}".format(self, self.ports))

    def statement(self):
        low, high = self.ports
        if low == high:
            return "portcon {0.protocol} {1} {0.context}".format(self, low)
        return "portcon {0.protocol} {1}-{2} {0.context}".format(self, low, high)


class Netifcon(Ocontext):
    """``netifcon NAME CONTEXT PACKET_CONTEXT``"""

    __slots__ = ("netif", "packet")
    _kind = "netifcons"

    def __init__(self, policy, netif, context, packet):
        self.policy = policy
        self.netif = netif
        self.context = context
        self.packet = packet

    def __hash__(self):
        return hash("netifcon|{0.netif}".format(self))

    def statement(self):
        return "netifcon {0.netif} {0.context} {0.packet}".format(self)


class Nodecon(Ocontext):
    """``nodecon ADDRESS NETMASK CONTEXT``; ``network`` is an ``ipaddress`` network."""

    __slots__ = ("ip_version", "network")
    _kind = "nodecons"

    def __init__(self, policy, version, addr, mask, context):
        self.policy = policy
        self.context = context
        import ipaddress  # here, not at the top: only nodecon and ibpkeycon use it

        if version == 4:
            self.ip_version = NodeconIPVersion.ipv4
            text = str(ipaddress.IPv4Address(addr))
        else:
            self.ip_version = NodeconIPVersion.ipv6
            text = str(ipaddress.IPv6Address(addr))
        cidr = sum(bin(b).count("1") for b in mask)
        net_with_mask = "{0}/{1}".format(text, cidr)
        try:
            self.network = ipaddress.ip_network(net_with_mask)
        except ValueError:
            import logging

            logging.getLogger("setools.policyrep").warning(
                "Nodecon with network {} {} has host bits set. Analyses may have "
                "unexpected results.".format(
                    text, ipaddress.ip_address(mask) if len(mask) in (4, 16) else mask))
            self.network = ipaddress.ip_network(net_with_mask, strict=False)

    def __hash__(self):
        return hash("nodecon|{}".format(self.network.with_netmask))

    def statement(self):
        return "nodecon {1} {0.context}".format(self, self.network.with_netmask.replace("/", " "))


class Ibpkeycon(Ocontext):
    """``ibpkeycon SUBNET_PREFIX PKEY[-PKEY] CONTEXT``"""

    __slots__ = ("subnet_prefix", "pkeys")
    _kind = "ibpkeycons"

    def __init__(self, policy, prefix, low, high, context):
        self.policy = policy
        self.pkeys = _made("IbpkeyconRange")(low, high)
        self.context = context
        import ipaddress

        self.subnet_prefix = ipaddress.IPv6Address(bytes(prefix) + bytes(8))

    def __hash__(self):
        return hash("ibpkeycon|{0.subnet_prefix}|{0.pkeys.low}|{0.pkeys.high}".format(self))

    def statement(self):
        if self.pkeys.low == self.pkeys.high:
            return "ibpkeycon {0.subnet_prefix} {0.pkeys.low:#x} {0.context}".format(self)
        return "ibpkeycon {0.subnet_prefix} {0.pkeys.low:#x}-{0.pkeys.high:#x} {0.context}".format(
            self)


class Ibendportcon(Ocontext):
    """``ibendportcon DEVICE PORT CONTEXT``"""

    __slots__ = ("name", "port")
    _kind = "ibendportcons"

    def __init__(self, policy, name, port, context):
        self.policy = policy
        self.name = name
        self.port = port
        self.context = context

    def __hash__(self):
        return hash("ibendportcon|{0.name}|{0.port}".format(self))

    def statement(self):
        return "ibendportcon {0.name} {0.port} {0.context}".format(self)


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

    def initialsids(self):
        """Every initial SID, in the policy's order."""
        return Listing(self._labeling("initialsids"))

    def fs_uses(self):
        """Every fs_use_* statement, in the policy's order."""
        return Listing(self._labeling("fs_uses"))

    def genfscons(self):
        """Every genfscon statement, by file system then path, as the policy holds them."""
        return Listing(self._labeling("genfscons"))

    def portcons(self):
        """Every portcon statement, in the policy's order."""
        return Listing(self._labeling("portcons"))

    def netifcons(self):
        """Every netifcon statement, in the policy's order."""
        return Listing(self._labeling("netifcons"))

    def nodecons(self):
        """Every nodecon statement: the IPv4 ones, then the IPv6 ones (chained, as
        setools chains its two iterators: no ``len()``)."""
        nodes = self._labeling("nodecons")
        return itertools.chain((n for n in nodes if n.ip_version is NodeconIPVersion.ipv4),
                               (n for n in nodes if n.ip_version is NodeconIPVersion.ipv6))

    def ibpkeycons(self):
        """Every ibpkeycon statement, in the policy's order."""
        return Listing(self._labeling("ibpkeycons"))

    def ibendportcons(self):
        """Every ibendportcon statement, in the policy's order."""
        return Listing(self._labeling("ibendportcons"))

    def lookup_initialsid(self, name):
        """An initial SID by name."""
        for sid in self.initialsids():
            if sid == name:
                return sid
        raise _exc.InvalidInitialSid("{0} is not a valid initial SID".format(name))


# The pickling of this part's objects is in ``_labeling_pickling`` (``policyrep._Deferred`` gives
# the ``__reduce__`` methods on first use); pickles name its rebuilding functions as this
# module's, which serves them here.
__getattr__ = _pickling_getattr(globals(), "_labeling_pickling", frozenset((
    "_context_at",
    "_context_ident",
    "_ocontext_at")))

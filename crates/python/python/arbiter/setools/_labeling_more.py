"""The methods of ``_labeling``'s objects that a script rarely calls (the statements'
text, hashing and keys; the contexts' text and range; the nodecon, ibpkeycon and
ibendportcon objects' making; the policy's labeling listings and
``lookup_initialsid``), imported on first use (``policyrep._Deferred``): a script that
only queries the labeling does not keep their code. Each namespace class below gives its
methods to the ``_labeling`` class of its name."""

import itertools

from . import exception as _exc
from ._labeling import SELINUX_SIDNAMES
from ._mls import Listing
from .policyrep import NodeconIPVersion, _made

_PART = "_labeling"


class Context:
    def _key(self):
        return id(self)

    def __str__(self):
        if self._range:
            return "{0.user}:{0.role}:{0.type_}:{0.range_}".format(self)
        return "{0.user}:{0.role}:{0.type_}".format(self)

    @property
    def range_(self):
        """The context's range (``MLSDisabled`` without MLS)."""
        if self._range:
            return self._range
        raise _exc.MLSDisabled

    def statement(self):
        raise _exc.NoStatement


class Ocontext:
    def _key(self):
        # One object per statement and policy (``_labeling``): its identity is the object's.
        return id(self)

    def __str__(self):
        return self.statement()


class InitialSID:
    def __str__(self):
        return self.name

    def statement(self):
        return "sid {0} {0.context}".format(self)


class FSUse:
    def _key(self):
        # setools never sets an FSUse's identity, so any two compare equal.
        return 0

    def __hash__(self):
        return hash("{0.ruletype}|{0.fs}".format(self))

    def statement(self):
        return "{0.ruletype} {0.fs} {0.context};".format(self)


class GenfsFiletype:
    def __str__(self):
        return self._filetype_to_text[self]


class Genfscon:
    def __hash__(self):
        return hash("genfscon|{0.fs}|{0.path}|{0.filetype}".format(self))

    def statement(self):
        return "genfscon {0.fs} {0.path} {0.filetype} {0.context}".format(self)


class Portcon:
    def __hash__(self):
        return hash("portcon|{0.protocol}|{1.low}|{1.high}".format(self, self.ports))

    def statement(self):
        low, high = self.ports
        if low == high:
            return "portcon {0.protocol} {1} {0.context}".format(self, low)
        return "portcon {0.protocol} {1}-{2} {0.context}".format(self, low, high)


class Netifcon:
    def __hash__(self):
        return hash("netifcon|{0.netif}".format(self))

    def statement(self):
        return "netifcon {0.netif} {0.context} {0.packet}".format(self)


class Nodecon:
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


class Ibpkeycon:
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


class Ibendportcon:
    def __init__(self, policy, name, port, context):
        self.policy = policy
        self.name = name
        self.port = port
        self.context = context

    def __hash__(self):
        return hash("ibendportcon|{0.name}|{0.port}".format(self))

    def statement(self):
        return "ibendportcon {0.name} {0.port} {0.context}".format(self)


class _LabelingPolicy:
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

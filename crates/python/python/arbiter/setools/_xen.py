"""Xen labeling of ``setools.policyrep`` on arbiter: ``Pirqcon``, ``Iomemcon``,
``Ioportcon``, ``Pcidevicecon`` and ``Devicetreecon`` with setools 4.4.1's attributes and
``str()``, and the ``SELinuxPolicy`` iterators and counts over them (``_XenPolicy``).

The tables come from the native ``labeling_tables`` (the policy's order, flat columns). In a SELinux
policy the Xen iterators are empty; setools 4.4.1 instead reads the Linux tables of the
same index as Xen records (``pirqcons()`` over the fs contexts), which nothing relies on.
In a Xen policy, initial SIDs are named from setools' ``XEN_SIDNAMES`` by SID number, as
setools names them (a number past the table raises ``IndexError`` there and here)."""

from ._labeling import Ocontext
from ._mls import Listing
from .policyrep import IomemconRange, IoportconRange

# setools 4.4.1's Xen initial SID names, indexed by SID number.
XEN_SIDNAMES = ("xen", "dom0", "domxen", "domio", "unlabeled", "security", "irq", "iomem",
                "ioport", "device", "domU", "domDM")

class Devicetreecon(Ocontext):
    """``devicetreecon PATH CONTEXT``"""

    __slots__ = ("path",)
    _kind = "devicetreecons"

    def __init__(self, policy, path, context):
        self.policy = policy
        self.path = path
        self.context = context

    def statement(self):
        return "devicetreecon {0.path} {0.context}".format(self)


class Iomemcon(Ocontext):
    """``iomemcon ADDR[-ADDR] CONTEXT``"""

    __slots__ = ("addr",)
    _kind = "iomemcons"

    def __init__(self, policy, low, high, context):
        self.policy = policy
        self.addr = IomemconRange(low, high)
        self.context = context

    def statement(self):
        low, high = self.addr
        if low == high:
            return "iomemcon {0} {1}".format(low, self.context)
        return "iomemcon {0}-{1} {2}".format(low, high, self.context)


class Ioportcon(Ocontext):
    """``ioportcon PORT[-PORT] CONTEXT``"""

    __slots__ = ("ports",)
    _kind = "ioportcons"

    def __init__(self, policy, low, high, context):
        self.policy = policy
        self.ports = IoportconRange(low, high)
        self.context = context

    def statement(self):
        low, high = self.ports
        if low == high:
            return "ioportcon {0} {1}".format(low, self.context)
        return "ioportcon {0}-{1} {2}".format(low, high, self.context)


class Pcidevicecon(Ocontext):
    """``pcidevicecon DEVICE CONTEXT``"""

    __slots__ = ("device",)
    _kind = "pcidevicecons"

    def __init__(self, policy, device, context):
        self.policy = policy
        self.device = device
        self.context = context

    def statement(self):
        return "pcidevicecon {0.device} {0.context}".format(self)


class Pirqcon(Ocontext):
    """``pirqcon IRQ CONTEXT``"""

    __slots__ = ("irq",)
    _kind = "pirqcons"

    def __init__(self, policy, irq, context):
        self.policy = policy
        self.irq = irq
        self.context = context

    def statement(self):
        return "pirqcon {0.irq} {0.context}".format(self)


# Each Xen table's class; its rows are the class's fields, then the context.
_XEN_KINDS = {
    "pirqcons": Pirqcon,
    "iomemcons": Iomemcon,
    "ioportcons": Ioportcon,
    "pcidevicecons": Pcidevicecon,
    "devicetreecons": Devicetreecon,
}


# Each Xen table's count of numbers per statement before its context's four.
_XEN_FIELDS = {"pirqcons": 1, "iomemcons": 2, "ioportcons": 2, "pcidevicecons": 1,
               "devicetreecons": 0}


def _xen_statements(policy, kind, table):
    """The objects of a Xen table (``_LabelingPolicy._build_labeling`` for a Xen kind) from
    its flat columns: a devicetreecon's path is a string, the other fields numbers."""
    cls = _XEN_KINDS[kind]
    ints, strs, _blobs, ranges = table
    nums = memoryview(ints).cast("Q")
    ctx = policy._contexts(ranges)
    k = _XEN_FIELDS[kind]
    stride = k + 4
    out = []
    for n, i in enumerate(range(0, len(nums), stride)):
        fields = [strs[n]] if kind == "devicetreecons" else nums[i:i + k].tolist()
        out.append(cls(policy, *fields, ctx(nums, i + k)))
    nums.release()
    return out


def _name_xen_sids(sids, numbers):
    """Names a Xen policy's initial SIDs from ``XEN_SIDNAMES`` by SID number."""
    for sid, number in zip(sids, numbers):
        sid.name = XEN_SIDNAMES[number]


class _XenPolicy:
    """The Xen part of ``SELinuxPolicy``: the Xen iterators and counts (policyrep's
    ``_PART_MEMBERS``); their objects are built by the labeling part's
    ``_build_labeling``, which asks this module for them (``_xen_statements``)."""

    def devicetreecons(self):
        """Every devicetreecon statement, in the policy's order."""
        return Listing(self._labeling("devicetreecons"))

    def iomemcons(self):
        """Every iomemcon statement, in the policy's order."""
        return Listing(self._labeling("iomemcons"))

    def ioportcons(self):
        """Every ioportcon statement, in the policy's order."""
        return Listing(self._labeling("ioportcons"))

    def pcidevicecons(self):
        """Every pcidevicecon statement, in the policy's order."""
        return Listing(self._labeling("pcidevicecons"))

    def pirqcons(self):
        """Every pirqcon statement, in the policy's order."""
        return Listing(self._labeling("pirqcons"))

    @property
    def devicetreecon_count(self):
        return len(self._labeling("devicetreecons"))

    @property
    def iomemcon_count(self):
        return len(self._labeling("iomemcons"))

    @property
    def ioportcon_count(self):
        return len(self._labeling("ioportcons"))

    @property
    def pcidevicecon_count(self):
        return len(self._labeling("pcidevicecons"))

    @property
    def pirqcon_count(self):
        return len(self._labeling("pirqcons"))

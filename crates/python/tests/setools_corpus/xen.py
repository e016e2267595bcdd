"""Corpus: a Xen policy's platform, initial SIDs (named from setools' XEN_SIDNAMES), the
five Xen labeling statements with their attributes, str(), repr(), hashing, equality and
ordering, the counts, and each Xen query with every keyword (numbers, paths, address and
port ranges with subset/overlap/superset/proper, context matching), in results() order,
with the exceptions bad criteria raise."""

import sys

import setools
from setools.policyrep import SELinuxPolicy
from setools.devicetreeconquery import DevicetreeconQuery
from setools.iomemconquery import IomemconQuery
from setools.ioportconquery import IoportconQuery
from setools.pcideviceconquery import PcideviceconQuery
from setools.pirqconquery import PirqconQuery

p = SELinuxPolicy(sys.argv[1])
print("target", p.target_platform, p.version, p.mls)


def run(label, cls, kw):
    try:
        res = [str(x) for x in cls(p, **kw).results()]
    except (setools.exception.SEToolsException, ValueError, TypeError, KeyError) as e:
        res = type(e).__name__ + ": " + str(e)
    print(label, sorted((k, str(v)) for k, v in kw.items()), res)


for name in ["initialsids_count", "pirqcon_count", "iomemcon_count", "ioportcon_count",
             "pcidevicecon_count", "devicetreecon_count"]:
    print(name, getattr(p, name))

for s in p.initialsids():
    print(repr(s), s.statement(), s == str(s), hash(s) == hash(str(s)))

attrs = {"pirqcons": "irq", "iomemcons": "addr", "ioportcons": "ports",
         "pcidevicecons": "device", "devicetreecons": "path"}
for name, attr in attrs.items():
    items = list(getattr(p, name)())
    print("len", name, len(getattr(p, name)()))
    for x in items:
        c = x.context
        print(type(x).__name__, repr(getattr(x, attr)), str(x), x.statement(), repr(x))
        print("  ", str(c), str(c.user), str(c.role), str(c.type_), str(c.range_))
        print("  ", x == str(x), hash(x) == hash(str(x)), x == items[0], x < items[-1])

ctx_kw = [{}, {"user": "system_u"}, {"type_": "irq_t"}, {"type_": "i.*_t", "type_regex": True},
          {"role": "object_r"}, {"range_": "s0"}, {"range_": "s0 - s1:c0.c2", "range_subset": True},
          {"range_": "s1", "range_overlap": True}, {"range_": "s0:c1", "range_superset": True},
          {"range_": "s0", "range_superset": True, "range_proper": True}]
for kw in ctx_kw:
    for cls in (PirqconQuery, IomemconQuery, IoportconQuery, PcideviceconQuery,
                DevicetreeconQuery):
        run(cls.__name__, cls, kw)

for irq in [None, 0, 9, 33, 65535, 7, -1]:
    run("PirqconQuery", PirqconQuery, {"irq": irq})
for dev in [None, 248, 0xc800, 5, -3]:
    run("PcideviceconQuery", PcideviceconQuery, {"device": dev})
for path in [None, "/cpus", "/soc", "/soc/uart@1c28000"]:
    run("DevicetreeconQuery", DevicetreeconQuery, {"path": path})

ranges = [(16, 31), (20, 25), (0xa0, 0xa0), (1, 2 ** 40), (0x100000000, 0x1000fffff),
          (0, 5), (9, 3), (96, 100), (0x3f8, 0x3ff), (97, 99), (128, 128)]
flags = [{}, {"subset": True}, {"overlap": True}, {"superset": True},
         {"subset": True, "proper": True}, {"superset": True, "proper": True}]
for r in ranges:
    for f in flags:
        run("IomemconQuery", IomemconQuery,
            dict({"addr": r}, **{"addr_" + k: v for k, v in f.items()}))
        run("IoportconQuery", IoportconQuery,
            dict({"ports": r}, **{"ports_" + k: v for k, v in f.items()}))

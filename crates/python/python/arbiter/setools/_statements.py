"""The ``statement()`` methods of ``policyrep``'s symbols and rules, imported on the first
call of one (``policyrep._Deferred``): a script rarely asks for the policy language text,
and their code is about 10 kB. Each namespace class below gives its functions to the
``policyrep`` class of its name."""

from .policyrep import perms_text


class Type:
    def statement(self):
        s = "type " + self.name
        aliases = self._aliases
        if len(aliases) == 1:
            s += " alias " + aliases[0]
        elif aliases:
            s += " alias {{ {} }}".format(" ".join(aliases))
        for a in self.attributes():
            s += ", " + a.name
        return s + ";"


class TypeAttribute:
    def statement(self):
        return "attribute {};".format(self.name)


class Role:
    def statement(self):
        types = sorted(str(t) for t in self.types())
        if len(types) == 1:
            return "role {} types {};".format(self.name, types[0])
        return "role {} types {{ {} }};".format(self.name, " ".join(types))


class User:
    def statement(self):
        roles = sorted(str(r) for r in self.roles)
        s = "user {} roles ".format(self.name)
        s += roles[0] if len(roles) == 1 else "{{ {} }}".format(" ".join(roles))
        if self._level is not None:
            s += " level {} range {}".format(self._level, self._range)
        return s + ";"


class Boolean:
    def statement(self):
        return "bool {} {};".format(self.name, "true" if self.state else "false")


class Common:
    def statement(self):
        return "common {}\n{{\n{}}}".format(
            self.name, "".join("\t{}\n".format(p) for p in sorted(self.perms))
        )


class ObjClass:
    def statement(self):
        s = "class {}\n".format(self.name)
        if self._common is not None:
            s += "inherits {}\n".format(self._common)
        if self.perms:
            s += "{\n" + "".join("\t{}\n".format(p) for p in sorted(self.perms)) + "}"
        return s


class PolicyCapability:
    def statement(self):
        return "policycap {};".format(self.name)


class BaseTERule:
    def statement(self):
        stmt = self._res.statement(self._i)
        if stmt is None:
            raise IndexError("list index out of range")
        if self.origin is None:
            return stmt
        o = self.origin
        head = "{} {} {}:{}".format(o.ruletype, o.source, o.target, o.tclass)
        return "{} {} {}:{}".format(self.ruletype, self.source, self.target, self.tclass) + (
            stmt[len(head):]
        )


class _DerivedAVRule:
    def statement(self):
        stmt = self._res.statement(self._i) or ""
        cond = stmt[stmt.index(";") + 1:] if ";" in stmt else ""
        return "{} {} {}:{} {};{}".format(
            self.ruletype, self.source, self.target, self.tclass, perms_text(self._perms), cond
        )


class RoleAllow:
    def statement(self):
        return "allow {0.source} {0.target};".format(self)


class RoleTransition:
    def statement(self):
        return "role_transition {0.source} {0.target}:{0.tclass} {0.default};".format(self)

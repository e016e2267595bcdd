"""The methods of ``_constraint``'s objects that a script rarely calls (the expressions'
text, items, equality and symbol types, the constraints' and defaults' text, equality and
hashing, a validatetrans statement's permissions),
imported on the first call of one (``policyrep._Deferred``): a script that only queries
constraints and defaults does not keep their code. Each namespace class below gives its
methods to the ``_constraint`` class of its name."""

from . import exception as _exc

_PART = "_constraint"


class ConstraintExprNode:
    def _key(self):
        return self._id

    def __str__(self):
        # setools' nodes have no text of their own: str() is statement(), which raises.
        return self.statement()

    def __contains__(self, item):
        return item in self._expression

    def __getitem__(self, idx):
        return self._expression[idx]

    def statement(self):
        raise _exc.NoStatement

    @property
    def symbol_type(self):
        if self._symbol_type is None:
            raise AttributeError("symbol_type")
        return self._symbol_type


class ConstraintExpression:
    def _key(self):
        return id(self)

    def __str__(self):
        ret = []
        for item in self.infix():
            if isinstance(item, frozenset):
                if len(item) > 1:
                    ret.append("{{ {0} }} ".format(" ".join(str(j) for j in item)))
                else:
                    ret.append("{0}".format(" ".join(str(j) for j in item)))
            else:
                ret.append(item)
        return " ".join(ret)

    def __getitem__(self, idx):
        return self._postfix[idx]

    def __iter__(self):
        return iter(self._postfix)

    def __eq__(self, other):
        return self._postfix == other

    def __hash__(self):
        return hash(str(self))

    def infix(self):
        """The expression in infix order, with setools' parentheses."""
        if self._infix is None:
            stack = []
            prev = 4
            for op in self._postfix:
                if isinstance(op, frozenset) or op in self._OPERANDS:
                    stack.append(op)
                    continue
                if op == "not":
                    operand = stack.pop()
                    stack.append([op, "(", operand, ")"])
                else:
                    operand2 = stack.pop()
                    operand1 = stack.pop()
                    if self._PRECEDENCE[op] < prev:
                        stack.append([operand1, op, operand2])
                    else:
                        stack.append(["(", operand1, op, operand2, ")"])
                prev = self._PRECEDENCE[op]
            self._infix = _flatten(stack)
        return self._infix

    def statement(self):
        raise _exc.NoStatement


class BaseConstraint:
    def _key(self):
        return id(self)

    def __str__(self):
        return self.statement()

    @property
    def perms(self):
        raise NotImplementedError


class Constraint:
    def statement(self):
        if len(self.perms) > 1:
            perms = "{{ {0} }}".format(" ".join(sorted(self.perms)))
        else:
            perms = list(self.perms)[0]
        return "{0.ruletype} {0.tclass} {1} ({0.expression}); ".format(self, perms)


class Validatetrans:
    def statement(self):
        return "{0.ruletype} {0.tclass} ({0.expression});".format(self)

    @property
    def perms(self):
        raise _exc.ConstraintUseError("{0} rules do not have permissions.".format(self.ruletype))


class Default:
    def _key(self):
        return (str(self.ruletype), self.tclass._value)

    def __eq__(self, other):
        return (self.ruletype == other.ruletype and self.tclass == other.tclass
                and self.default == other.default)

    def __hash__(self):
        return hash("{0.ruletype}|{0.tclass}".format(self))

    def __str__(self):
        return self.statement()

    def statement(self):
        return "{0.ruletype} {0.tclass} {0.default};".format(self)


class DefaultRange:
    def __eq__(self, other):
        return (self.ruletype == other.ruletype and self.tclass == other.tclass
                and self.default == other.default and self.default_range == other.default_range)

    def __hash__(self):
        return hash("{0.ruletype}|{0.tclass}".format(self))

    def statement(self):
        if self.default_range:
            return "{0.ruletype} {0.tclass} {0.default} {0.default_range};".format(self)
        return "{0.ruletype} {0.tclass} {0.default};".format(self)


def _flatten(items):
    out = []
    for i in items:
        if isinstance(i, list):
            out.extend(_flatten(i))
        else:
            out.append(i)
    return out

"""A conditional expression's evaluation, truth table and rule blocks
(``ConditionalOperator.evaluate``, ``Conditional.evaluate``/``truth_table``/
``true_rules``/``false_rules``), imported on the first call of one
(``policyrep._Deferred``): a query script never evaluates a conditional. Each namespace
class below gives its functions to the ``policyrep`` class of its name."""

import itertools

from .policyrep import Boolean as _Boolean
from .policyrep import TruthTableRow


class ConditionalOperator:
    def evaluate(self, *operands):
        a = operands[0]
        if self._op == "!":
            return not a
        b = operands[1]
        return {
            "&&": lambda: a and b,
            "||": lambda: a or b,
            "^": lambda: a != b,
            "==": lambda: a == b,
            "!=": lambda: a != b,
        }[self._op]()


class Conditional:
    def evaluate(self, **kwargs):
        """The expression's value, with each Boolean at ``kwargs[name]`` or its default."""
        stack = []
        for item in self.expression():
            if isinstance(item, _Boolean):
                stack.append(kwargs.get(item.name, item.state))
            elif item.unary:
                stack.append(item.evaluate(stack.pop()))
            else:
                b, a = stack.pop(), stack.pop()
                stack.append(item.evaluate(a, b))
        return stack[0]

    def truth_table(self):
        """Every assignment of the Booleans (sorted by name, from all True down) and the
        expression's value under it."""
        names = sorted(str(b) for b in self.booleans)
        rows = []
        for values in itertools.product([True, False], repeat=len(names)):
            v = dict(zip(names, values))
            rows.append(TruthTableRow(v, self.evaluate(**v)))
        return rows

    def _rules(self, block):
        from .terulequery import TERuleQuery

        return (
            r
            for r in TERuleQuery(self.policy).results()
            if r._cond is not None and r._cond[0] == self._node and r._cond[1] == block
        )

    def true_rules(self):
        """The rules of the true block."""
        return self._rules(True)

    def false_rules(self):
        """The rules of the false block."""
        return self._rules(False)

"""The opcodes of :mod:`derive.rate_program`'s stack machine, without SymPy: what the
interpreted event loop (:mod:`sim.table_loop`) needs in a process that runs a prepared
model and never imports SymPy."""

from __future__ import annotations

#: Opcodes: the frequent ones first, then the two-argument and the one-argument
#: operations (the interpreter in :mod:`sim.table_loop` tells them apart by range).
OPS = (
    "const", "state", "param", "add", "mul", "div", "neg", "powi", "select",
    "sub", "pow", "min", "max", "heaviside", "lt", "le", "gt", "ge", "eq", "ne", "and", "or",
    "sqrt", "exp", "log", "abs", "sign", "not",
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
)  # fmt: skip
#: Opcode of each operation name.
OP = {name: code for code, name in enumerate(OPS)}

"""The code that computes one atom's outcome for row ``r``: a template per mode.

The shared atom pass (``kernel.pass_source``) is this block in a loop, writing
an outcome column. In the templates ``@`` marks a local's name and ``OUT`` the
outcome; ``_fill`` gives a template the child it reads.
Outcomes: 0 false, 1 true, 2 unknown, 4 failure, 8 back to the per-message
engine (one bit each, so a kernel tests all atoms for either with one OR); modes are ``plan/atoms.py``'s. A tag outside 0..25, a child whose validity
bit is clear (in every mode, constants too: a malformed row is never answered
here) or a code outside the dictionary gives 8.
"""
from __future__ import annotations

from ..plan.atoms import (BOOLS, CONST, DOUBLES, INTS, STRINGS, UINTS, VALUES_F, VALUES_I,
                    VALUES_U)

ARGS = ("t", "i", "iv", "u", "uv", "f", "fv", "c", "cv", "b", "bv",
        "m", "k", "bt", "ii", "uu", "dd", "st", "vi", "oi", "vu", "ou", "vf", "of")
"""An atom's arguments: its field's arrays (``columns.FieldArrays``), then its
modes, constants, boolean table, intervals, string table and value tables."""

HEAD = """\
tag@ = np.int64(t@[r])
mode@ = m@[tag@] if tag@ < 26 else 6
"""

SPECIALS = """\
if (tag@ == 11 or tag@ == 12) and mode@ != 6 and (fv@[r >> 3] >> (r & 7)) & 1:
    xf@ = f@[r]
    if xf@ - xf@ != 0.0 or xf@ == 0.0:   # NaN, infinities and zeros: -0.0 is special
        shift@ = 26 + 4 * (tag@ - 11)
        if xf@ != xf@:
            tag@ = shift@
        elif xf@ == 0.0 and math.copysign(1.0, xf@) < 0.0:
            tag@ = shift@ + 1
        elif xf@ == math.inf:
            tag@ = shift@ + 2
        elif xf@ == -math.inf:
            tag@ = shift@ + 3
        mode@ = m@[tag@]
"""

_SPANS = """\
if ((VALID@[r >> 3] >> (r & 7)) & 1) == 0:
    OUT = 8
else:
    X@ = VALUES@[r]
    hi@ = SPANS@.shape[0]
    if hi@ <= 4:
        OUT = 0
        for j@ in range(hi@):
            if SPANS@[j@, 0] <= X@ and X@ <= SPANS@[j@, 1]:
                OUT = 1
    else:
        lo@ = 0
        while lo@ < hi@:
            mid@ = (lo@ + hi@) >> 1
            if SPANS@[mid@, 0] <= X@:
                lo@ = mid@ + 1
            else:
                hi@ = mid@
        OUT = 1 if lo@ > 0 and X@ <= SPANS@[lo@ - 1, 1] else 0
"""

_LOOKUP = """\
if ((VALID@[r >> 3] >> (r & 7)) & 1) == 0:
    OUT = 8
else:
    X@ = VALUES@[r]
    lo@ = 0
    hi@ = KEYS@.shape[0]
    while lo@ < hi@:
        mid@ = (lo@ + hi@) >> 1
        if KEYS@[mid@] < X@:
            lo@ = mid@ + 1
        else:
            hi@ = mid@
    OUT = OUTS@[lo@] if lo@ < KEYS@.shape[0] and KEYS@[lo@] == X@ else 8
"""


def _fill(text: str, **names: str) -> str:
    for key, value in names.items():
        text = text.replace(key + "@", value + "@")
    return text


_CONST = """\
if tag@ < 2 or tag@ > 25:
    OUT = k@[tag@]
elif tag@ == 2:
    OUT = k@[tag@] if (bv@[r >> 3] >> (r & 7)) & 1 else 8
elif tag@ == 6:
    OUT = k@[tag@] if (uv@[r >> 3] >> (r & 7)) & 1 else 8
elif tag@ == 11 or tag@ == 12:
    OUT = k@[tag@] if (fv@[r >> 3] >> (r & 7)) & 1 else 8
elif tag@ <= 10 or tag@ == 17:
    OUT = k@[tag@] if (iv@[r >> 3] >> (r & 7)) & 1 else 8
elif tag@ == 16 or tag@ == 20 or tag@ == 21:
    OUT = 8
else:
    OUT = k@[tag@]
"""
"""A constant answer, given only where the tag's child holds a value (a null
or missing child under its tag is a malformed row: back to the per-message
engine, which refuses it; a string tag's constant is lowered to a string
table by the engine, which knows which dictionary entries are sound); the
pseudo tags of the float specials (26..33) were checked already, and the
``x`` and ``e`` tags are checked before the pass (``columns.py``)."""

MODES = {
    CONST: _CONST,
    STRINGS: """\
code@ = c@[r]
if ((cv@[r >> 3] >> (r & 7)) & 1) and code@ >= 0 and code@ < st@.shape[1]:
    OUT = st@[0 if tag@ == 16 else (1 if tag@ == 20 else 2), code@]
else:
    OUT = 8
""",
    BOOLS: """\
if (bv@[r >> 3] >> (r & 7)) & 1:
    OUT = bt@[(b@[r >> 3] >> (r & 7)) & 1]
else:
    OUT = 8
""",
    INTS: _fill(_SPANS, VALID="iv", X="xi", VALUES="i", SPANS="ii"),
    UINTS: _fill(_SPANS, VALID="uv", X="xu", VALUES="u", SPANS="uu"),
    DOUBLES: _fill(_SPANS, VALID="fv", X="xf", VALUES="f", SPANS="dd"),
    VALUES_I: _fill(_LOOKUP, VALID="iv", X="xi", VALUES="i", KEYS="vi", OUTS="oi"),
    VALUES_U: _fill(_LOOKUP, VALID="uv", X="xu", VALUES="u", KEYS="vu", OUTS="ou"),
    VALUES_F: _fill(_LOOKUP, VALID="fv", X="xf", VALUES="f", KEYS="vf", OUTS="of"),
}


def block() -> list[str]:
    """The lines (unindented) that put the atom's outcome for row ``r`` in ``out[r]``."""
    text = HEAD + SPECIALS
    keyword = "if"
    for mode in sorted(MODES):
        text += f"{keyword} mode@ == {mode}:\n"
        text += "".join("    " + line + "\n" for line in MODES[mode].splitlines())
        keyword = "elif"
    text += "else:\n    OUT = 8\n"
    return text.replace("OUT", "out[r]").replace("@", "").splitlines()

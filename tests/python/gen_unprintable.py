"""Writes crates/core/src/pyvalue/unprintable.rs from this Python's str.isprintable()."""
import sys, unicodedata
r = []
s = None
for c in range(0x110000):
    p = chr(c).isprintable()
    if not p and s is None:
        s = c
    if p and s is not None:
        r.append((s, c - 1))
        s = None
if s is not None:
    r.append((s, 0x10FFFF))
v = sys.version_info
out = [
    "//! The code points `str.isprintable()` rejects in CPython %d.%d (Unicode %s): categories"
    % (v.major, v.minor, unicodedata.unidata_version),
    "//! Cc, Cf, Cs, Co, Cn, Zl, Zp, and Zs other than U+0020. Written by",
    "//! `tests/python/gen_unprintable.py` (tests/python/README.md); do not edit by hand.",
    "",
    "/// Inclusive `(first, last)` ranges, sorted and disjoint.",
    "pub(super) const UNPRINTABLE: &[(u32, u32)] = &[",
]
for a, b in r:
    out.append("    (0x%X, 0x%X)," % (a, b))
out.append("];")
print("\n".join(out))

"""Helpers that mirror Faber semantics (docs/language.md § 6, § 8) in Python.

Used by ref.py to derive the expected stdout of tests/run/*.fab independently of faber.
"""
import math

class Nihil:
    """Not used: Python None stands for `nihil`."""

class _Vacuum:
    def __repr__(self):
        return "vacuum"

VACUUM = _Vacuum()

class Rec:
    """A genus value: name plus fields in declaration order."""
    def __init__(self, name, **fields):
        self.name = name
        self.fields = dict(fields)
    def copy(self):
        return Rec(self.name, **{k: deep(v) for k, v in self.fields.items()})
    def __getattr__(self, k):
        if k in ("name", "fields"):
            raise AttributeError(k)
        return self.fields[k]
    def __eq__(self, other):
        return isinstance(other, Rec) and self.name == other.name and self.fields == other.fields

class Fn:
    def __init__(self, name):
        self.name = name

class Bytes:
    def __init__(self, data):
        self.data = bytes(data)

def deep(v):
    """Value semantics: a logical copy."""
    if isinstance(v, list):
        return [deep(x) for x in v]
    if isinstance(v, dict):
        return {k: deep(x) for k, x in v.items()}
    if isinstance(v, Rec):
        return v.copy()
    return v

I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1

def chk(n):
    assert I64_MIN <= n <= I64_MAX, "overflow"
    return n

def idiv(a, b):
    """Int `/`: truncates toward zero (not Python's floor)."""
    assert b != 0
    q = abs(a) // abs(b)
    return chk(q if (a >= 0) == (b >= 0) else -q)

def irem(a, b):
    """Int `%`: sign follows the dividend (not Python's floor)."""
    assert b != 0
    return chk(a - idiv(a, b) * b)

def frem(a, b):
    return math.fmod(a, b)

def _plain_decimal(r):
    """Rewrite Python's repr (maybe with exponent) as a plain decimal, like Rust `{}`."""
    neg = r.startswith("-")
    if neg:
        r = r[1:]
    if "e" not in r:
        return ("-" if neg else "") + r
    mant, exp = r.split("e")
    exp = int(exp)
    if "." in mant:
        ip, fp = mant.split(".")
    else:
        ip, fp = mant, ""
    digits = ip + fp
    point = len(ip) + exp
    if point <= 0:
        s = "0." + "0" * (-point) + digits
    elif point >= len(digits):
        s = digits + "0" * (point - len(digits))
    else:
        s = digits[:point] + "." + digits[point:]
    s = s.rstrip("0").rstrip(".") if "." in s else s
    return ("-" if neg else "") + s

def fdisp(x):
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == math.floor(x):
        return "%.1f" % x          # Rust {:.1}: exact digits, sign of -0.0 kept
    return _plain_decimal(repr(x))  # shortest round-trip, no exponent

def rust_debug_str(s):
    out = '"'
    for ch in s:
        if ch == '"':
            out += '\\"'
        elif ch == "\\":
            out += "\\\\"
        elif ch == "\n":
            out += "\\n"
        elif ch == "\t":
            out += "\\t"
        elif ch == "\r":
            out += "\\r"
        else:
            out += ch
    return out + '"'

def disp(v):
    if v is None:
        return "nihil"
    if v is True:
        return "verum"
    if v is False:
        return "falsum"
    if v is VACUUM:
        return "vacuum"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return fdisp(v)
    if isinstance(v, str):
        return v
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(disp(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(rust_debug_str(k) + ": " + disp(x) for k, x in v.items()) + "}"
    if isinstance(v, Rec):
        return v.name + " { " + ", ".join("%s = %s" % (k, disp(x)) for k, x in v.fields.items()) + " }"
    if isinstance(v, Fn):
        return "<functio %s>" % v.name
    if isinstance(v, Bytes):
        return "<%d bytes>" % len(v.data)
    raise TypeError(v)

def feq(a, b):
    """`≡`: deep, Int vs Float by value."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return a == b

class Out:
    def __init__(self):
        self.lines = []
    def nota(self, *vals):
        self.lines.append(", ".join(disp(v) for v in vals))
    scribe = nota
    def text(self):
        return "".join(l + "\n" for l in self.lines)

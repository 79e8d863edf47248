"""The A0 class table for the test oracles: the text side of the rows of
rust/hotswap-code-object/src/gfx1250/classes.rs, read from their export
rust/hotswap-code-object/data/a0-classes.json (a unit test keeps the export
equal to the rows).

The oracles read the class names and their order, each class's pattern over
llvm-objdump-22 mnemonics, its conditions' names, and each same-size
encoding's rule and A0 mnemonic. They never read the opcodes: the classifier
does, and LLVM (llvm-objdump-22 counts, llvm-mc-22 disassembly of the fixes)
is what checks that the two sides of a row agree. What a condition or a rule
means in LLVM's text each oracle writes itself, and it fails on a name it does
not know.
"""
import json
import re
from pathlib import Path

PATH = Path(__file__).resolve().parents[2] / "rust" / "hotswap-code-object" / "data" / "a0-classes.json"

_ROWS = json.loads(PATH.read_text())["classes"]

# The stable names, in the order of the JSON output.
NAMES = [row["name"] for row in _ROWS]
ROWS = {row["name"]: row for row in _ROWS}


def pattern(name):
    """The class's compiled pattern (matched at the start of a mnemonic with
    `_dpp` removed), or None for a class defined by an operand alone."""
    p = ROWS[name]["pattern"]
    return re.compile(p) if p else None


def conditions(name):
    """The names of the conditions of the class's encodings, in table order."""
    out = []
    for e in ROWS[name]["encodings"]:
        if e["condition"] not in out:
            out.append(e["condition"])
    return out


def same_size(name):
    """The class's same-size encodings: dicts with mnemonic, rule, replacement."""
    return [e for e in ROWS[name]["encodings"] if e["fix"] == "same-size"]


def fixes(name):
    """The fix kinds the class's sites may have ("same-size", "growth")."""
    return ROWS[name]["fix"]

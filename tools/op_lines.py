#!/usr/bin/env python3
"""op_lines.py - What each op costs in code: for every declaration file
kernels/<family>/<stem>.cpp (one that registers ops with TILEJIT_REGISTER_OP),
its files (<stem>.h, <stem>.cpp, <stem>.dsl.cpp, <stem>_test.cpp and the CPU
reference <stem>_ref.cpp where there is one), its DSL lines (<stem>.dsl.cpp)
and its glue (<stem>.h + <stem>.cpp: the entry point, the declaration and the
spec), counted without blank and comment-only lines, as a Markdown table.

    tools/op_lines.py            # the table and the totals
    tools/op_lines.py --csv      # the same rows as CSV
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
KERNELS = ROOT / "kernels"


def code_lines(path):
    """Lines of `path` that are neither blank nor only a comment (// or a
    line inside a /* */ block); 0 for a file that is not there."""
    if not path.exists():
        return 0
    n, in_block = 0, False
    for line in path.read_text().splitlines():
        s = line.strip()
        if in_block:
            if "*/" in s:
                in_block = False
            continue
        if not s or s.startswith("//"):
            continue
        if s.startswith("/*"):
            in_block = "*/" not in s
            continue
        n += 1
    return n


def rows():
    for decl in sorted(KERNELS.glob("*/*.cpp")):
        name = decl.name
        if name.endswith(("_ref.cpp", "_test.cpp", ".dsl.cpp")):
            continue
        text = decl.read_text()
        ops = re.findall(r"TILEJIT_REGISTER_OP\((\w+)_op\)", text)
        if not ops:
            continue
        stem = decl.with_suffix("")
        files = {
            "h": stem.with_suffix(".h"),
            "cpp": decl,
            "dsl": stem.with_name(stem.name + ".dsl.cpp"),
            "test": stem.with_name(stem.name + "_test.cpp"),
            "ref": stem.with_name(stem.name + "_ref.cpp"),
        }
        present = [f for f in files.values() if f.exists()]
        dsl = code_lines(files["dsl"])
        glue = code_lines(files["h"]) + code_lines(files["cpp"])
        yield {
            "declaration": str(decl.relative_to(ROOT)),
            "ops": ", ".join(ops),
            "files": len(present),
            "dsl": dsl,
            "glue": glue,
            "test": code_lines(files["test"]),
            "ref": code_lines(files["ref"]),
        }


def main():
    table = list(rows())
    if "--csv" in sys.argv[1:]:
        print("declaration,ops,files,dsl,glue,test,ref")
        for r in table:
            print(f'{r["declaration"]},"{r["ops"]}",{r["files"]},{r["dsl"]},'
                  f'{r["glue"]},{r["test"]},{r["ref"]}')
        return
    print("| declaration | ops | files | DSL lines | glue lines | glue / DSL "
          "| case table | reference |")
    print("|---|---|---|---|---|---|---|---|")
    for r in table:
        ratio = f'{r["glue"] / r["dsl"]:.2f}' if r["dsl"] else "-"
        print(f'| {r["declaration"]} | {r["ops"]} | {r["files"]} | '
              f'{r["dsl"]} | {r["glue"]} | {ratio} | {r["test"]} | '
              f'{r["ref"]} |')
    dsl = sum(r["dsl"] for r in table)
    glue = sum(r["glue"] for r in table)
    print(f"\n{len(table)} declaration files, "
          f"{sum(r['ops'].count(',') + 1 for r in table)} ops: {dsl} DSL "
          f"lines, {glue} glue lines ({glue / max(dsl, 1):.2f}x), at most "
          f"{max(r['files'] for r in table)} files an op family.")


if __name__ == "__main__":
    main()

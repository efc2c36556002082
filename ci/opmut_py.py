"""Python support of ci/mutate-operators.py: operator mutants of Python files and pytest killers.

Mutants of a .py file (found with `tokenize`, so nothing inside strings, docstrings or
comments is touched): relational flips (< <= > >= == !=), arithmetic flips of binary + - * /,
+-1 on decimal integer constants, `and` <-> `or`, `is` <-> `is not`, `not in` -> `in`, and a
dropped unary `not`. Each mutant is a dict like the C++ generator's (kind, line, col, orig,
repl). A Python mutant needs no rebuild: the mutated file is written into the build's package
folder (build/python/indexer_oracle) and the pytest killers run against it.
"""
import io
import os
import re
import subprocess
import sys
import time
import tokenize

REL = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}
ARITH = {"+": "-", "-": "+", "*": "/", "/": "*"}
# A binary operator follows an operand: a name (not a keyword), a number, a string or a closing bracket.
KEYWORDS = {"and", "or", "not", "in", "is", "if", "else", "return", "lambda", "yield", "for", "while", "assert", "del",
            "raise", "import", "from", "with", "as", "elif", "print"}
PYTHON = "/usr/bin/python3"  # Debian's python3: numpy, pybind11 and pytest (the pyenv python3 on PATH has none)


def _operand_end(tok):
    if tok is None:
        return False
    if tok.type == tokenize.NAME:
        return tok.string not in KEYWORDS
    return tok.type in (tokenize.NUMBER, tokenize.STRING) or (tok.type == tokenize.OP and tok.string in ")]}")


def generate(lines):
    """Mutants of a Python source given as a list of lines (no trailing newlines)."""
    text = "\n".join(lines) + "\n"
    toks = [t for t in tokenize.generate_tokens(io.StringIO(text).readline)
            if t.type not in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)]
    out = []
    for i, t in enumerate(toks):
        prev = toks[i - 1] if i else None
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        (ln, col), s = t.start, t.string
        line = lines[ln - 1] if ln <= len(lines) else ""
        if t.type == tokenize.OP and s in REL:
            out.append(("relational", ln, col, s, REL[s]))
        elif t.type == tokenize.OP and s in ARITH and _operand_end(prev):
            if s == "*" and prev.string in ("(", ","):
                continue
            out.append(("arithmetic", ln, col, s, ARITH[s]))
        elif t.type == tokenize.NUMBER and re.fullmatch(r"\d+", s):
            v = int(s)
            out.append(("constant", ln, col, s, str(v + 1)))
            if v > 0:
                out.append(("constant", ln, col, s, str(v - 1)))
        elif t.type == tokenize.NAME and s in ("and", "or"):
            out.append(("logical", ln, col, s, "or" if s == "and" else "and"))
        elif t.type == tokenize.NAME and s == "is":
            if nxt is not None and nxt.string == "not" and line[col:col + 6] == "is not":
                out.append(("logical", ln, col, "is not", "is"))
            else:
                out.append(("logical", ln, col, "is", "is not"))
        elif t.type == tokenize.NAME and s == "not":
            if prev is not None and prev.string == "is":
                continue  # `is not` is handled above
            if nxt is not None and nxt.string == "in" and line[col:col + 7] == "not in ":
                out.append(("logical", ln, col, "not in", "in"))
            elif line[col:col + 4] == "not ":
                out.append(("logical", ln, col, "not ", ""))
    seen, uniq = set(), []
    for kind, ln, col, orig, rep in out:
        if (ln, col, orig, rep) in seen:
            continue
        seen.add((ln, col, orig, rep))
        uniq.append({"kind": kind, "line": ln, "col": col, "orig": orig, "repl": rep})
    return uniq


def compiles(text, name):
    try:
        compile(text, name, "exec")
        return True
    except SyntaxError:
        return False


def pytest_env(root, build):
    e = dict(os.environ)
    e.pop("IXO_JUDGE_MUTANT", None)
    e.update(PYTHONPATH=os.path.join(build, "python") + os.pathsep + os.path.join(root, "examples"),
             IXO=os.path.join(build, "tools", "ixo", "ixo"), IXO_EXAMPLES=os.path.join(root, "examples"),
             OMP_NUM_THREADS="2", PYTHONDONTWRITEBYTECODE="1")
    e.pop("IXO_PYTEST_SHARD", None)
    return e


def run_pytest(nodes, root, build, timeout, log=None):
    """Runs the pytest nodes (FILE or FILE::TEST, relative to python/tests) in one pytest
    process with -x: (None, output) if all pass, else ("pytest:NODE", output) naming the
    first failing test (or the whole list when pytest failed before any test)."""
    tests = os.path.join(root, "python", "tests")
    cmd = [PYTHON, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-o", "addopts="] + nodes
    t0 = time.time()
    try:
        p = subprocess.run(cmd, cwd=tests, env=pytest_env(root, build), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, errors="replace", timeout=timeout)
        rc, out = p.returncode, p.stdout
    except subprocess.TimeoutExpired:
        rc, out = "timeout", ""
    if log:
        with open(log, "a") as f:
            f.write(f"$ {' '.join(cmd)}  (rc {rc}, {time.time() - t0:.1f} s)\n{out[-4000:]}\n")
    if rc == 0:
        return None, out
    if rc == "timeout":
        return "pytest:timeout", out
    m = re.search(r"^(?:FAILED|ERROR) (\S+)", out, re.M)
    if m:
        return "pytest:" + m.group(1).split(" - ")[0], out
    return f"pytest:exit {rc} ({' '.join(nodes)})", out


def install_py(src, build, relpath, text):
    """Writes a file of the package into the source copy and, for python/indexer_oracle/*.py,
    into the build's package folder (what the pytest killers import)."""
    targets = [os.path.join(src, relpath)]
    if relpath.startswith("python/indexer_oracle/"):
        targets.append(os.path.join(build, "python", "indexer_oracle", os.path.basename(relpath)))
    for path in targets:
        with open(path, "w") as f:
            f.write(text)

#!/usr/bin/env python3
"""Static checks of the CUDA kernels' machine code (sessions 40-41), on the build machine.

Rows 59-64 were built by reading SASS: compile a cubin for sm_90a, compare each kernel's .text
byte for byte with another build (a knob at 0 must leave the default build unchanged), and count a
main loop's instructions by opcode before and after a change. The build machine has nvcc and
ptxas but no disassembler; the GPU machine's CUDA has one. Copy it once a session (5.6 MB):

    run: cp /usr/local/cuda/bin/cuobjdump /usr/local/cuda/bin/nvdisasm $OUT/   (device tool)
    here: mkdir -p /tmp/cudabin && cp <files_at>/cuobjdump <files_at>/nvdisasm /tmp/cudabin/

Subcommands (run from the repository root, with /usr/bin/python3):

    cubin OUT.cubin [NVCC FLAGS...]   nvcc -cubin -arch=sm_90a of kernels/gpu/indexer_cuda.cu (SRC=... for
                                      another translation unit, e.g. kernels/gpu/cp_cuda.cu); ~30 s
    text-diff A.cubin B.cubin         per kernel: instructions in A and B and ~how many differ (nothing
                                      printed: every .text section is byte-identical)
    loops A.cubin KERNEL_SUBSTRING    the kernel's loops that hold >= 8 HMMA: first and last address,
                                      instructions, HMMA, F2FP, LDGSTS, R2UR (needs cuobjdump)
    opcodes A.cubin KERNEL_SUBSTRING FIRST LAST   opcode counts of the address range [FIRST, LAST] (hex)

Example (row 63: the narrow loop before and after, the knob-0 build unchanged):

    python3 docs/experiments/sass_tools.py cubin /tmp/a.cubin
    python3 docs/experiments/sass_tools.py cubin /tmp/w.cubin -DIXO_NARROW_SMEM_ADDR=1
    python3 docs/experiments/sass_tools.py loops /tmp/w.cubin 'score_mma_kernelILi128ELi1ELb1ELb1E'
"""
import collections
import difflib
import os
import re
import subprocess
import sys

CUOBJDUMP = os.environ.get("CUOBJDUMP", "/tmp/cudabin/cuobjdump")
NVCC_FLAGS = ["-cubin", "-arch=sm_90a", "-DIXO_ENABLE_MUTANTS=1", "-Ikernels", "-Ireference/include",
              "-Ikernels/common", "-isystem=/usr/include/eigen3", "-O3", "-DNDEBUG", "--expt-relaxed-constexpr",
              "-std=c++17"]


def cubin(out, flags):
    src = os.environ.get("SRC", "kernels/gpu/indexer_cuda.cu")
    subprocess.run(["nvcc", *NVCC_FLAGS, *flags, "-o", out, src], check=True)


def text_sections(path):
    """Each .text.<kernel> section's bytes (readelf's section table)."""
    table = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True, check=True).stdout
    data = open(path, "rb").read()
    out = {}
    for line in table.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\.text\.\S+)\s+\S+\s+[0-9a-f]+\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
        if m:
            off, size = int(m.group(2), 16), int(m.group(3), 16)
            out[m.group(1)] = data[off:off + size]
    return out


def text_diff(a_path, b_path):
    a, b = text_sections(a_path), text_sections(b_path)
    for name in sorted(set(a) | set(b)):
        x, y = a.get(name, b""), b.get(name, b"")
        if x == y:
            continue
        xi = [x[i:i + 16] for i in range(0, len(x), 16)]  # sm_90 instructions are 16 bytes
        yi = [y[i:i + 16] for i in range(0, len(y), 16)]
        sm = difflib.SequenceMatcher(None, xi, yi, autojunk=False)
        differ = sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in sm.get_opcodes() if tag != "equal")
        print(len(xi), len(yi), "differing instructions ~", differ, name[:100])


def kernel_sass(path, kernel):
    """(address, instruction text) of the first kernel whose mangled name contains `kernel`."""
    sass = subprocess.run([CUOBJDUMP, "-sass", path], capture_output=True, text=True, check=True).stdout
    out, on = [], False
    for line in sass.splitlines():
        if "Function :" in line:
            if on:
                break
            on = kernel in line
            continue
        m = re.match(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", line)
        if on and m:
            out.append((int(m.group(1), 16), m.group(2).strip()))
    return out


def opcode(text):
    return re.sub(r"^@!?U?P\w+\s+", "", text).split()[0]


def loops(path, kernel):
    ins = kernel_sass(path, kernel)
    index = {a: i for i, (a, _) in enumerate(ins)}
    print(len(ins), "instructions")
    for i, (a, t) in enumerate(ins):
        m = re.search(r"BRA\s+(?:\S+\s+)?0x([0-9a-f]+)", t)
        if not m or int(m.group(1), 16) > a or int(m.group(1), 16) not in index:
            continue
        body = ins[index[int(m.group(1), 16)]:i + 1]
        c = collections.Counter(opcode(x) for _, x in body)
        if c["HMMA.16816.F32"] >= 8:
            print(hex(body[0][0]), hex(a), len(body), "HMMA", c["HMMA.16816.F32"], "F2FP",
                  sum(v for k, v in c.items() if k.startswith("F2FP")), "LDGSTS",
                  sum(v for k, v in c.items() if k.startswith("LDGSTS")), "R2UR", c["R2UR"])


def opcodes(path, kernel, first, last):
    lo, hi = int(first, 16), int(last, 16)
    c = collections.Counter(opcode(t) for a, t in kernel_sass(path, kernel) if lo <= a <= hi)
    for k, v in c.most_common():
        print(f"{v:6d} {k}")


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"cubin": lambda: cubin(args[0], args[1:]), "text-diff": lambda: text_diff(*args), "loops": lambda: loops(*args),
     "opcodes": lambda: opcodes(*args)}[cmd]()

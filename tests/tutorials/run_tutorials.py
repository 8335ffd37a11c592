#!/usr/bin/env python3
"""PETSc's own tutorial tests with aijocean against aij.

Reads the /*TEST ... TEST*/ block of each tutorial source (ksp ex45 and ex56, snes ex19 and ex5), and runs every test
whose requirements this PETSc meets twice: as PETSc's test harness would, and with `-dll_append LIB -mat_type aijocean`
(-dm_mat_type for the DM-based ones) and -mat_ocean_view, whose headers count the products that ran through petsc-ocean.  A test passes when both exit 0 and report the same iteration counts (the "... iterations N"
lines of -ksp_converged_reason / -snes_converged_reason / ex19's and ex5's own, and the number of -ksp_monitor and
-snes_monitor lines).  Residual values may differ at rounding level (our products sum in another order), so they are
not compared.

  run_tutorials.py --examples DIR --bin BUILD/tutorials --lib LIB [--filter REGEX] [--max-np N] [--list] [--petscconf H]

Prints one line per test ("ok", "FAIL", or "skip (reason)") and ends with "N passed, N failed, N skipped".
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

# program, source, the option that gives its matrices our type: DM-made matrices take -dm_mat_type (a global
# -mat_type would also retype the matrix-free operator of -snes_mf_operator, which breaks plain aij as much)
TUTORIALS = [("ksp_ex45", "ksp/ksp/tutorials/ex45.c", "-dm_mat_type"), ("ksp_ex56", "ksp/ksp/tutorials/ex56.c", "-mat_type"),
             ("snes_ex19", "snes/tutorials/ex19.c", "-dm_mat_type"), ("snes_ex5", "snes/tutorials/ex5.c", "-dm_mat_type")]


def test_block(path):
    text = open(path, errors="replace").read()
    m = re.search(r"/\*TEST(.*?)TEST\*/", text, re.S)
    return m.group(1) if m else ""


def parse_tests(block):
    """The tests of a TEST block: dicts with suffix, nsize, args, requires (testset values inherited)."""
    lines = [l.rstrip() for l in block.split("\n") if l.strip() and not l.strip().startswith("#")]
    tests, stack = [], []  # stack of (indent, kind, dict)

    def inherited(key):
        vals = [d.get(key) for _, _, d in stack if d.get(key)]
        return vals

    def close(indent):
        while stack and stack[-1][0] >= indent:
            ind, kind, d = stack.pop()
            if kind == "test":
                t = {"suffix": "", "nsize": "1", "args": "", "requires": "", "env": ""}
                for _, _, p in stack:  # enclosing testsets
                    for k in ("nsize", "requires", "suffix"):
                        if p.get(k) and not d.get(k):
                            t[k] = p[k]
                    if p.get("args"):
                        t["args"] += " " + p["args"]
                    if p.get("requires") and d.get("requires"):
                        t["requires"] = p["requires"] + " " + d["requires"]
                for k in ("suffix", "nsize"):
                    if d.get(k):
                        t[k] = d[k]
                if d.get("requires") and not t["requires"]:
                    t["requires"] = d["requires"]
                if d.get("args"):
                    t["args"] += " " + d["args"]
                if stack and stack[-1][1] == "testset" and stack[-1][2].get("suffix") and d.get("suffix"):
                    t["suffix"] = stack[-1][2]["suffix"] + "_" + d["suffix"]
                t["args"] = t["args"].strip()
                tests.append(t)
            elif kind == "testset" and not d.get("_children"):
                stack.append((ind, "test", d))  # a testset without tests is one test
                close(ind)

    for l in lines:
        indent = len(l) - len(l.lstrip())
        s = l.strip()
        if s in ("test:", "testset:", "build:"):
            close(indent)
            if stack and s in ("test:", "testset:"):
                stack[-1][2]["_children"] = True
            stack.append((indent, s[:-1], {}))
            continue
        if ":" in s and stack:
            key, val = s.split(":", 1)
            stack[-1][2][key.strip()] = val.strip()
    close(-1)
    return tests


def petsc_config(header):
    have = set()
    if header and os.path.exists(header):
        for l in open(header):
            m = re.match(r"#define\s+PETSC_HAVE_(\w+)\s", l)
            if m:
                have.add(m.group(1).lower())
            m = re.match(r"#define\s+(PETSC_\w+)\s", l)
            if m:
                have.add("defined(" + m.group(1).lower() + ")")
    return have


def unmet(requires, have):
    """The first requirement this PETSc does not meet, or None (real, double, 32-bit indices assumed)."""
    for r in requires.split():
        neg = r.startswith("!")
        name = r[1:] if neg else r
        low = name.lower()
        if low in ("single", "complex", "__float128", "quad", "64bitindices", "cuda", "hip", "kokkos", "sycl",
                   "kokkos_kernels", "viennacl", "datafilespath", "x"):
            ok = False
        elif low in ("double", "real", "!single"):
            ok = True
        elif low.startswith("defined("):
            ok = low in have  # the harness's own PETSCTEST_* macros are never defined here
        else:
            ok = low in have
        if ok == neg:
            return r
    return None


def counts(out):
    """The iteration counts a run reports."""
    its = re.findall(r"(?:converged|diverged)[^\n]*?iterations (\d+)", out, re.I)
    its += re.findall(r"[Nn]umber of (?:SNES|nonlinear|linear) iterations\s*=\s*(\d+)", out)
    ksp = len(re.findall(r"^\s*\d+ KSP (?:Residual|preconditioned|unpreconditioned)", out, re.M))
    snes = len(re.findall(r"^\s*\d+ SNES Function norm", out, re.M))
    return its, ksp, snes


def run(cmd, timeout, cwd):
    t0 = time.time()
    try:
        p = subprocess.run(cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout, cwd=cwd)
        return p.returncode, p.stdout.decode(errors="replace"), time.time() - t0
    except subprocess.TimeoutExpired as e:
        return 124, (e.stdout or b"").decode(errors="replace"), time.time() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--examples", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--petscconf", default="")
    ap.add_argument("--filter", default="")
    ap.add_argument("--max-np", type=int, default=8)
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--mpiexec", default="mpiexec --allow-run-as-root --oversubscribe")
    a = ap.parse_args()
    have = petsc_config(a.petscconf)
    scratch = tempfile.mkdtemp(prefix="ocean-tutorials-")  # the tutorials' own output files land here
    npass = nfail = nskip = 0
    for exe, src, typeopt in TUTORIALS:
        path = os.path.join(a.examples, src)
        if not os.path.exists(path):
            print("skip %s: %s not found" % (exe, path))
            continue
        for t in parse_tests(test_block(path)):
            name = "%s%s" % (exe, "_" + t["suffix"] if t["suffix"] else "")
            if a.filter and not re.search(a.filter, name + " " + t["args"]):
                continue
            why = unmet(t["requires"], have)
            np_ = int(re.sub(r"\D.*", "", t["nsize"]) or 1)
            args = t["args"]
            if not why and np_ > a.max_np:
                why = "nsize %d > %d" % (np_, a.max_np)
            if not why and re.search(r"\$\{|-f\s|-viewer_binary|_view\s+\S*:\S*\.", args):
                why = "needs data files or loops"
            if not why and re.search(r"-(dm_)?mat_type\s", args):
                why = "the test sets its own matrix type"
            if not why and ">" in args:
                why = "the test sends its output to a file"
            if why:
                print("skip %-40s (%s)" % (name, why))
                nskip += 1
                continue
            if a.list:
                print("test %-40s -n %d %s" % (name, np_, args))
                continue
            base = "%s -n %d %s %s" % (a.mpiexec, np_, os.path.abspath(os.path.join(a.bin, exe)), args)
            ocean = base + " -dll_append %s %s aijocean -mat_ocean_view" % (shlex.quote(os.path.abspath(a.lib)),
                                                                               typeopt)
            rc0, out0, t0 = run(base, a.timeout, scratch)
            if rc0 != 0:
                print("skip %-40s (aij itself exits %d)" % (name, rc0))
                nskip += 1
                continue
            rc1, out1, t1 = run(ocean, a.timeout, scratch)
            c0, c1 = counts(out0), counts(out1)
            products = len(re.findall(r"^petsc-ocean (?:AB|AtB|PtAP) ", out1, re.M))
            if rc1 == 0 and c0 == c1:
                print("ok   %-40s %5.1fs %5.1fs  its %s ksp %d snes %d, %d ocean products"
                      % (name, t0, t1, ",".join(c0[0]) or "-", c0[1], c0[2], products))
                npass += 1
            else:
                print("FAIL %-40s exit %d; aij its %s ksp %d snes %d, aijocean its %s ksp %d snes %d\n  %s"
                      % (name, rc1, ",".join(c0[0]), c0[1], c0[2], ",".join(c1[0]), c1[1], c1[2], ocean))
                print("  " + "\n  ".join(out1.strip().split("\n")[-15:]))
                nfail += 1
            sys.stdout.flush()
    shutil.rmtree(scratch, ignore_errors=True)
    print("%d passed, %d failed, %d skipped" % (npass, nfail, nskip))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The layering of the library, checked: no include cycle among its own files, no call cycle among its objects
(from nm), and nothing in src/core that includes or calls a backend (src/cpu, src/cuda, cuda/) or the PETSc layer.
Run from the repository root after the library is built; prints the offending files and exits 1 on a violation.
  -v  also prints every object's dependencies."""
import collections, glob, os, re, subprocess, sys

verbose = '-v' in sys.argv
failed = False


def cycles(graph, nodes):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in nodes:
        if v not in index:
            visit(v)
    return out


# ---- includes
files = sorted(glob.glob('src/**/*.[ch]', recursive=True) + glob.glob('cuda/*.cu') + glob.glob('cuda/*.cuh') +
               glob.glob('cuda/*.h') + glob.glob('include/*.h'))
includes = collections.defaultdict(set)
for f in files:
    for m in re.finditer(r'^\s*#\s*include\s+"([^"]+)"', open(f).read(), re.M):
        for d in [os.path.dirname(f), 'include', 'src', 'cuda']:
            p = os.path.normpath(os.path.join(d, m.group(1)))
            if os.path.exists(p):
                includes[f].add(p)
                break
bad = cycles(includes, files)
if bad:
    failed = True
    print('include cycles:', bad)
bad = [(f, i) for f in files if f.startswith('src/core/') for i in includes[f]
       if not (i.startswith('src/core/') or i.startswith('include/'))]
if bad:
    failed = True
    print('src/core includes files of other layers:', bad)

# ---- calls, from the objects' symbols
objs = sorted(glob.glob('build/src/**/*.o', recursive=True) + glob.glob('build/cuda/*.o'))
if not objs:
    sys.exit('no objects under build/src: build the library first')
defined, used = {}, {}
for o in objs:
    d, u = set(), set()
    for line in subprocess.run(['nm', o], capture_output=True, text=True, check=True).stdout.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in 'TDRB':
            d.add(p[2])
        elif len(p) == 2 and p[0] == 'U':
            u.add(p[1])
    defined[o], used[o] = d, u
owner = {s: o for o, d in defined.items() for s in d}
calls = collections.defaultdict(set)
for o, u in used.items():
    for s in u:
        if s in owner and owner[s] != o:
            calls[o].add(owner[s])
short = lambda o: o[len('build/'):]
if verbose:
    for o in objs:
        print(short(o), '->', ' '.join(sorted(short(x) for x in calls[o])))
bad = cycles(calls, objs)
if bad:
    failed = True
    print('call cycles:', [[short(o) for o in c] for c in bad])
bad = sorted({(short(o), short(x)) for o in objs for x in calls[o]
              if short(o).startswith('src/core/') and not short(x).startswith('src/core/')})
if bad:
    failed = True
    print('src/core uses symbols of other layers:', bad)
sys.exit(1 if failed else 0)

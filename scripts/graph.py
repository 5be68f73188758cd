#!/usr/bin/env python3
"""graph.py: src/'s include graph, its import circles and its arrows back up (`make graph`).

    scripts/graph.py                 the summary: files, includes, circles, arrows back up per folder
    scripts/graph.py --dot FILE      also the graph as dot text into FILE (- for stdout)
    scripts/graph.py --check         exit 1 when there is a circle or an arrow back up

Read from the sources alone (no build needed). Definitions, also in docs/architecture.md ("Structure"):

- A header's *implementers* are the .c files whose object defines a global symbol (function or object)
  the header declares (declarations read from the header's text; definitions from `nm` of the objects
  under build/, so `make graph` builds them first). Its *owner* is the .c of the same path and stem
  (src/k8s/leader.h: src/k8s/leader.c); a module's private header X_int.h belongs to X.c
  (src/sched/sched_int.h: src/sched/sched.c). A header with no .c of its stem (src/core/http.h) has no
  owner.
- A .c file *uses* another when its object has an undefined symbol the other's object defines: the edge
  of the *use graph*, file to file, what the linker joins (macros such as `gs_xmalloc` count through the
  function they expand to).
- An *import circle* is a strongly connected component of more than one file in the use graph: files
  that cannot be read, tested or linked one without the other (map.c <-> map_cache.c).
- An *arrow back up* is a pair (X.c, H) where X.c implements part of a header H of its own folder that
  it does not own. X's callers include H, which belongs to another file (or to none), so the arrow that
  should point down to X's own header points up to someone else's: to follow a call one must know which
  of H's implementers holds it, and X.c and H's owner tend to call each other (the circles). A header
  whose only implementer is its owner has none; a header implemented by k files besides its owner has k.

The dot text draws files as nodes grouped by folder, the use graph as plain edges (a circle's edges in
red) and the arrows back up in blue, dashed, from the .c to the header.
"""
import argparse
import collections
import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
SRC = 'src'

IDENT = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def strip(text):
    """The text without comments, string and character literals (each replaced by a space), and
    without preprocessor lines (kept as empty lines); newlines are kept so offsets stay meaningful."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '/' and i + 1 < n and text[i + 1] == '*':
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(''.join('\n' if ch == '\n' else ' ' for ch in text[i:j]))
            i = j
        elif c == '/' and i + 1 < n and text[i + 1] == '/':
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ')
            i = j
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == '\\' else 1
            out.append(' ')
            i = j + 1
        elif c == '#' and (i == 0 or text[i - 1] == '\n'):
            j = i
            while True:  # a directive with its continuation lines
                k = text.find('\n', j)
                if k < 0:
                    k = n
                    break
                if text[k - 1] != '\\':
                    break
                j = k + 1
            out.append(''.join('\n' for ch in text[i:k] if ch == '\n'))
            i = k
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def top_level_statements(code):
    """(statement text, has_body) for each statement at brace depth 0: a declaration ending in ';'
    or a definition whose body '{...}' follows (a function, or a struct/enum/initialiser)."""
    depth = 0
    start = 0
    stmts = []
    i = 0
    head = None
    while i < len(code):
        c = code[i]
        if c == '{':
            if depth == 0:
                head = code[start:i]
            depth += 1
        elif c == '}':
            depth -= 1
            if depth == 0:
                # a function body ends the statement; an aggregate's '}' is followed by ';' or a name
                rest = code[i + 1:].lstrip()
                if head is not None and re.search(r'\)\s*$', head) and not re.search(r'=\s*$', head):
                    stmts.append((head, True))
                    start = i + 1
                    head = None
        elif c == ';' and depth == 0:
            stmts.append((code[start:i] if head is None else head + ' {} ' + code[start:i].split('}')[-1], False))
            start = i + 1
            head = None
        i += 1
    return stmts


def declared_name(stmt):
    """The function or object a top-level statement declares or defines, or None (typedefs, tags,
    prototypes of function pointers)."""
    s = ' '.join(stmt.split())
    if not s or s.startswith('typedef') or s.startswith('static_assert') or s.startswith('_Static_assert'):
        return None
    if re.match(r'^(struct|union|enum)(\s+\w+)?\s*(\{\s*\}\s*)?$', s):
        return None
    # a function: NAME( ... ) possibly followed by attributes
    m = re.search(r'\b([A-Za-z_]\w*)\s*\((?![^()]*\)\s*\()', s)
    if m and not re.match(r'^(struct|union|enum)\s+\w+\s*\{', s):
        # in "void (*f)(int)" the name is inside the first parentheses: an object, skip the rare case
        name = m.group(1)
        if name in ('__attribute__', 'sizeof'):
            return None
        return name
    # an object: the last identifier before '=' or '[' or the end
    s2 = re.split(r'=|\[', s)[0]
    ids = IDENT.findall(s2)
    if not ids:
        return None
    return ids[-1]


def symbols(obj):
    """(defined, undefined) global symbols of an object file, by nm."""
    if not os.path.exists(obj):
        sys.exit('graph: %s is missing: build first (make graph does)' % obj)
    out = subprocess.run(['nm', obj], capture_output=True, text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in 'TDBRCGS':
            defined.add(p[2])
        elif len(p) == 2 and p[0] == 'U':
            undefined.add(p[1])
    return defined, undefined


class Tree:
    def __init__(self, root, build):
        self.root = root
        self.files = []
        for d, _, names in os.walk(os.path.join(root, SRC)):
            for f in names:
                if f.endswith(('.c', '.h')):
                    self.files.append(os.path.relpath(os.path.join(d, f), root))
        self.files.sort()
        self.text = {}
        self.code = {}
        for f in self.files:
            with open(os.path.join(root, f), encoding='utf-8', errors='replace') as fh:
                self.text[f] = fh.read()
            self.code[f] = strip(self.text[f])
        self.includes = {f: self._includes(f) for f in self.files}
        self.defines = {}   # .c -> set of names defined outside static (the object's symbols)
        self.declares = {}  # .h -> set of names declared
        self.uses = {}      # .c -> the .c files it uses
        for f in self.files:
            if f.endswith('.h'):
                names = set()
                for stmt, body in top_level_statements(self.code[f]):
                    if 'static' in IDENT.findall(stmt):
                        continue
                    n = declared_name(stmt)
                    if n:
                        names.add(n)
                self.declares[f] = names
        undefined = {}
        for f in self.files:
            if f.endswith('.c'):
                self.defines[f], undefined[f] = symbols(os.path.join(build, f[:-2] + '.o'))
        self.definer = {}
        for f, names in self.defines.items():
            for n in names:
                self.definer.setdefault(n, f)
        for f, names in undefined.items():
            self.uses[f] = sorted({self.definer[n] for n in names if n in self.definer and self.definer[n] != f})
        self.implementers = {}
        for h, names in self.declares.items():
            self.implementers[h] = sorted({self.definer[n] for n in names if n in self.definer})

    def _includes(self, f):
        out = []
        for inc in INCLUDE.findall(self.text[f]):
            p = os.path.normpath(os.path.join(SRC, inc))
            if p not in self.text and os.path.exists(os.path.join(self.root, os.path.dirname(f), inc)):
                p = os.path.normpath(os.path.join(os.path.dirname(f), inc))
            if os.path.exists(os.path.join(self.root, p)):
                out.append(p)
        return out

    @staticmethod
    def owner(h):
        """A header's owner: the .c of its stem; a module's private header X_int.h belongs to X.c."""
        stem = h[:-2]
        if stem.endswith('_int'):
            stem = stem[:-4]
        return stem + '.c'

    def circles(self):
        """Strongly connected components of more than one file in the use graph (Tarjan, iterative)."""
        index, low, onstack, stack, comps = {}, {}, set(), [], []
        counter = [0]
        for v0 in sorted(self.uses):
            if v0 in index:
                continue
            work = [(v0, iter(self.uses[v0]))]
            index[v0] = low[v0] = counter[0]
            counter[0] += 1
            stack.append(v0)
            onstack.add(v0)
            while work:
                v, it = work[-1]
                advanced = False
                for w in it:
                    if w not in index:
                        index[w] = low[w] = counter[0]
                        counter[0] += 1
                        stack.append(w)
                        onstack.add(w)
                        work.append((w, iter(self.uses.get(w, []))))
                        advanced = True
                        break
                    elif w in onstack:
                        low[v] = min(low[v], index[w])
                if advanced:
                    continue
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        onstack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        comps.append(sorted(comp))
        return sorted(comps)

    def arrows_back_up(self):
        """(x.c, h) for each .c file x implementing part of a header h of its folder that it does not own."""
        out = []
        for h, impl in sorted(self.implementers.items()):
            for x in impl:
                if x != self.owner(h) and os.path.dirname(x) == os.path.dirname(h):
                    out.append((x, h))
        return out


def dot(tree, circles, arrows):
    red = set()
    for comp in circles:
        cs = set(comp)
        for a in comp:
            for b in tree.uses[a]:
                if b in cs:
                    red.add((a, b))
    lines = ['digraph src {', '\trankdir=BT;', '\tnode [shape=box, fontsize=10];']
    folders = collections.defaultdict(list)
    for f in tree.files:
        folders[os.path.dirname(f)].append(f)
    for i, (d, fs) in enumerate(sorted(folders.items())):
        lines.append('\tsubgraph cluster_%d {' % i)
        lines.append('\t\tlabel="%s";' % d)
        for f in fs:
            if f.endswith('.c') or any(f == h for _, h in arrows):
                lines.append('\t\t"%s";' % f)
        lines.append('\t}')
    for a in sorted(tree.uses):
        for b in tree.uses[a]:
            lines.append('\t"%s" -> "%s"%s;' % (a, b, ' [color=red]' if (a, b) in red else ''))
    for x, h in arrows:
        lines.append('\t"%s" -> "%s" [color=blue, style=dashed, label="back up"];' % (x, h))
    lines.append('}')
    return '\n'.join(lines) + '\n'


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--dot', help='write the graph as dot text to this file (- for stdout)')
    ap.add_argument('--check', action='store_true', help='exit 1 on a circle or an arrow back up')
    ap.add_argument('--root', default=ROOT, help='the repository (default: this script\'s)')
    ap.add_argument('--build', default='build', help='where the objects are, relative to the root (build)')
    a = ap.parse_args()
    tree = Tree(a.root, os.path.join(a.root, a.build))
    circles = tree.circles()
    arrows = tree.arrows_back_up()
    if a.dot:
        text = dot(tree, circles, arrows)
        if a.dot == '-':
            sys.stdout.write(text)
        else:
            with open(a.dot, 'w') as fh:
                fh.write(text)
    nc = sum(1 for f in tree.files if f.endswith('.c'))
    nh = len(tree.files) - nc
    ninc = sum(len(v) for v in tree.includes.values())
    nuse = sum(len(v) for v in tree.uses.values())
    print('graph: %d .c, %d .h, %d includes, %d uses between files' % (nc, nh, ninc, nuse))
    print('graph: %d import circle%s' % (len(circles), '' if len(circles) == 1 else 's'))
    for comp in circles:
        print('  circle: %s' % ' <-> '.join(comp))
    per = collections.Counter(os.path.dirname(x) for x, _ in arrows)
    print('graph: %d arrow%s back up' % (len(arrows), '' if len(arrows) == 1 else 's'))
    for d in sorted({os.path.dirname(f) for f in tree.files}):
        print('  %s: %d' % (d, per[d]))
        for x, h in arrows:
            if os.path.dirname(x) == d:
                own = tree.owner(h)
                print('    %s implements part of %s (%s)' % (x, h, 'owned by ' + own if own in tree.text else 'no .c of its own'))
    if a.check and (circles or arrows):
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())

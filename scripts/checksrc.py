#!/usr/bin/env python3
"""checksrc.py: the house rules a machine can check (`make style`; curl's checksrc is the model).

    scripts/checksrc.py                  every rule; exit 1 on any finding
    scripts/checksrc.py RULE...          some: format alloc uv_close naming length layering docs
    scripts/checksrc.py --root DIR       another copy of the tree (tests/style/test_checksrc.sh)

Each finding is one line, "checksrc: RULE: FILE:LINE: what", and the rules are (docs/style.md):

format    The files of FORMATTED are as clang-format (14, with .clang-format) writes them.
alloc     malloc, calloc, realloc, reallocarray, strdup and strndup are called only in the files of
          RAW_ALLOC: where a peer sizes the allocation and a failure fails only that request, item or
          connection (docs/architecture.md, "Allocation"). Everywhere else: gs_xmalloc and friends
          (src/core/alloc.h). free() is not restricted: it releases both kinds.
uv_close  uv_close is called in src/core/closer.c (gs_closer_uv), or with a close callback of the
          same file that reports to a closer (calls gs_closer_drop): the close protocol of
          src/core/closer.h. Exceptions in UV_CLOSE.
naming    Every function or object a .c file exports (not static) is named gs_MODULE_... or
          gs_MODULE__... (shared inside the module), where MODULE is the file's stem or a leading part
          of it cut at "_" (sched_place.c: sched_place or sched), or gs_TYPE_..., where struct gs_TYPE
          or enum gs_TYPE is defined in the file's own header: a record's or an enum's functions
          named for it (objects.c's gs_pod_obj_free, sched.c's gs_wait_reason_name). Exceptions in
          NAMING.
length    No function in src/ is longer than MAX_FUNCTION_LINES (80) lines, counted from the first
          line of its signature to its closing brace (docs/style.md; "No function over 80 lines",
          0f3436d). Exceptions in LONG_FUNCTIONS.
layering  The includes point down: src/sched uses neither libuv nor mbedTLS and includes core only;
          src/core includes no other layer; src/lint/lint.[ch] use core and sched only and src/lint
          never the webhook; src/k8s and src/webhook never include each other.
docs      In docs/*.md and README.md, every backticked path names a file or folder of the repository
          (a glob at least one), and every backticked C name gs_... occurs in the code of src/ or
          tests/ (comments and strings aside; gs_x* and gs_x_ are prefixes, gs_MODULE_ a placeholder);
          GS_... names occur in some file of the repository outside docs/ and README.md. Exceptions
          in DOCS. The README's "Flags" table names every option of src/main_opts.c (a row may
          shorten the ones after its first: "`--leader-elect-lease-duration`, `-renew-deadline`"), and
          docs/reliability.md's table of harnesses every tests/fuzz/fuzz_*.c. A link to a heading
          ("(docs/sched.md#preemption)", "(#flags)") names one that exists, as GitHub spells anchors.

The exception lists are kept short, each entry with its reason; an entry that no longer matches a
finding is itself reported (so a fixed exception is removed).
"""
import argparse
import fnmatch
import glob
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True  # no scripts/__pycache__ in the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from graph import IDENT, declared_name, strip, top_level_statements  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))

# ---- the lists ---------------------------------------------------------------------------------------

# Files and folders clang-format checks (folders: their *.c and *.h), minus FORMAT_TODO.
FORMATTED = [
    'src/core', 'src/webhook', 'src/k8s', 'src/sched', 'src/lint', 'src/main.c', 'src/main_opts.c', 'src/main_opts.h',
    'tests/unit/test_authz.c', 'tests/unit/test_conn.c', 'tests/unit/test_core.c', 'tests/unit/test_decode.c',
    'tests/unit/test_decode_pb.c', 'tests/unit/test_grpc.c', 'tests/unit/test_health_api.c',
    'tests/unit/test_hmap.c', 'tests/unit/test_http_client.c', 'tests/unit/test_http_server.c',
    'tests/unit/test_json_items.c', 'tests/unit/test_kubeconfig.c', 'tests/unit/test_leader.c',
    'tests/unit/test_lines.c', 'tests/unit/test_pb.c', 'tests/unit/test_podresources.c', 'tests/unit/test_tls.c',
    'tests/unit/test_inuse.c', 'tests/unit/test_agent.c', 'tests/unit/test_gang.c', 'tests/unit/test_lint.c',
    'tests/fuzz/fuzz_gang.c', 'tests/unit/test_decode_gpm.c', 'tests/fuzz/fuzz_gpm.c', 'bench/bench.c',
]
# Not yet formatted (docs/style.md, "To do"): being edited elsewhere when the check came (globs).
FORMAT_TODO = []

# Files that may allocate with malloc and friends: what they allocate is sized by a peer.
RAW_ALLOC = {
    'src/core/alloc.c': 'the gs_x* wrappers themselves',
    'src/core/buf.c': 'gs_buf: bodies and messages a peer sizes, under each buffer\'s cap',
    'src/core/conn.c': 'a write request sized by what is sent (a body)',
    'src/core/hmap.c': 'the table and key copies: its insert reports -ENOMEM (maps a peer fills)',
    'src/core/json_nul.c': 'a copy of a peer\'s JSON text',
    'src/k8s/certs.c': 'a Secret\'s contents',
    'src/k8s/decode.c': 'decoded objects', 'src/k8s/decode_items.c': 'decoded objects',
    'src/k8s/decode_pdb.c': 'decoded objects',
    'src/k8s/decode_json.c': 'strings copied out of a peer\'s JSON',
    'src/k8s/decode_pb.c': 'decoded objects', 'src/k8s/decode_pb_wire.c': 'decoded objects',
    'src/k8s/review.c': 'a TokenReview\'s user', 'src/k8s/watch.c': 'a resourceVersion, a continue token',
    'src/k8s/podresources.c': 'the kubelet\'s PodResources answer',
    'src/k8s/cmd.c': 'a response body kept',
    'src/lint/lint_cli.c': 'a manifest read from a file or the apiserver',
    'src/sched/map.c': 'an annotation\'s map', 'src/sched/map_cache.c': 'the map cache\'s entries (annotations)',
    'src/webhook/admission.c': 'a refusal message naming what the review holds',
}

# uv_close outside the protocol: file -> reason.
UV_CLOSE = {
    'src/main.c': 'main owns the loop and closes the signal handles last (docs/architecture.md, "Closing")',
}

# Exported names outside gs_MODULE_: file -> (fnmatch patterns, reason).
NAMING = {
    'src/core/alloc.c': (['gs_x*_at', 'gs_oom_at'], 'shared core names for what they are (architecture.md, "Names")'),
    'src/webhook/server.c': (['gs_webhook_*'], 'src/webhook\'s entry, named for its folder: main.c starts "the webhook" '
                             '(gs_webhook_start), of which server.c is the HTTPS server'),
}

# A function's lines, from the first line of its signature to its closing brace, at most (docs/style.md).
MAX_FUNCTION_LINES = 80
# Functions of src/ longer than that: (file, function) -> reason.
LONG_FUNCTIONS = {
}

# Backticked words of the docs that name nothing in the tree on purpose: (doc, word) -> reason.
DOCS = {
    ('docs/architecture.md', 'gs_x'): 'a placeholder in the naming rule (struct gs_x)',
    ('docs/cluster.md', 'pause.c'): 'a file of the Kubernetes tree, not ours',
    ('docs/decisions.md', 'http1client.h'): 'a header of h2o, not ours',
}

LAYERS = [
    # (files (globs), forbidden include regex, message)
    (['src/sched/*.[ch]'], r'[<"](uv\.h|mbedtls/)', 'src/sched must not use libuv or mbedTLS'),
    (['src/core/*.[ch]'], r'"(k8s|sched|webhook|lint)/', 'src/core must not know Kubernetes'),
    (['src/sched/*.[ch]'], r'"(k8s|webhook|lint)/', 'src/sched depends on core only'),
    (['src/lint/lint.c', 'src/lint/lint.h'], r'([<"](uv\.h|mbedtls/)|"(k8s|webhook)/)',
     'src/lint/lint.c uses core and sched only (the apiserver is lint_cli.c\'s)'),
    (['src/lint/*.[ch]'], r'"webhook/', 'src/lint does not use the webhook'),
    (['src/k8s/*.[ch]'], r'"webhook/', 'src/k8s and src/webhook never include each other'),
    (['src/webhook/*.[ch]'], r'"k8s/', 'src/k8s and src/webhook never include each other'),
]

RAW_ALLOC_FUNCS = ('malloc', 'calloc', 'realloc', 'reallocarray', 'strdup', 'strndup')

# ---- helpers -----------------------------------------------------------------------------------------

findings = []
used_exceptions = set()


def report(rule, path, line, what):
    findings.append('checksrc: %s: %s:%d: %s' % (rule, path, line, what))


def read(root, path):
    with open(os.path.join(root, path), encoding='utf-8', errors='replace') as fh:
        return fh.read()


def c_files(root, pattern='src/**/*.[ch]'):
    return sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, pattern), recursive=True))


def line_of(text, offset):
    return text.count('\n', 0, offset) + 1


def formatted_files(root):
    out = []
    for item in FORMATTED:
        p = os.path.join(root, item)
        if os.path.isdir(p):
            out += [os.path.relpath(f, root) for f in sorted(glob.glob(os.path.join(p, '*.[ch]')))]
        elif os.path.exists(p):
            out.append(item)
    return [f for f in out if not any(fnmatch.fnmatchcase(f, p) for p in FORMAT_TODO)]


# ---- the rules ---------------------------------------------------------------------------------------


def rule_format(root):
    files = formatted_files(root)
    try:
        r = subprocess.run(['clang-format', '--style=file', '--dry-run', '--Werror', '--ferror-limit=1'] + files,
                           capture_output=True, text=True, cwd=root)
    except FileNotFoundError:
        report('format', '.clang-format', 1, 'clang-format is not installed (tests/deps.sh installs it)')
        return len(files)
    seen = set()
    for m in re.finditer(r'^(\S+?):(\d+):\d+: (?:error|warning): code should be clang-formatted', r.stderr, re.M):
        f = os.path.relpath(os.path.join(root, m.group(1)), root)
        if f not in seen:
            seen.add(f)
            report('format', f, int(m.group(2)), 'not as clang-format writes it (clang-format -i %s)' % f)
    if r.returncode != 0 and not seen:
        report('format', '.clang-format', 1, 'clang-format failed: %s' % r.stderr.strip()[:300])
    return len(files)


def rule_alloc(root):
    pat = re.compile(r'(?<![\w.>])(%s)\s*\(' % '|'.join(RAW_ALLOC_FUNCS))
    for f in c_files(root):
        code = strip(read(root, f))
        for m in pat.finditer(code):
            if f in RAW_ALLOC:
                used_exceptions.add(('alloc', f))
                continue
            report('alloc', f, line_of(code, m.start()),
                   '%s(): use gs_x%s (src/core/alloc.h), or list the file in RAW_ALLOC if a peer sizes it'
                   % (m.group(1), m.group(1)))


def function_spans(code):
    """(name, start, body, end) of each function defined in code (comments and strings already stripped):
    start is the offset of its signature's first line, body of the text after its opening brace, end of
    its closing brace."""
    out = []
    for m in re.finditer(r'^[A-Za-z_][^;{}]*?\b([A-Za-z_]\w*)\s*\([^;{}]*\)\s*\{', code, re.M):
        depth, i = 0, m.end() - 1
        while i < len(code):
            if code[i] == '{':
                depth += 1
            elif code[i] == '}':
                depth -= 1
                if depth == 0:
                    break
            i += 1
        out.append((m.group(1), m.start(), m.end(), i))
    return out


def functions(code):
    """name -> body text of each function defined in code (comments and strings already stripped)."""
    return {name: code[body:end] for name, _, body, end in function_spans(code)}


def rule_uv_close(root):
    pat = re.compile(r'(?<![\w.>])uv_close\s*\(([^;]*)\)\s*;')
    for f in c_files(root):
        if f == 'src/core/closer.c':
            continue
        code = strip(read(root, f))
        fns = None
        for m in pat.finditer(code):
            args = m.group(1)
            cb = args.rsplit(',', 1)[-1].strip() if ',' in args else ''
            if fns is None:
                fns = functions(code)
            if cb in fns and 'gs_closer_drop' in fns[cb]:
                continue
            if f in UV_CLOSE:
                used_exceptions.add(('uv_close', f))
                continue
            report('uv_close', f, line_of(code, m.start()),
                   'uv_close(%s) outside the close protocol: gs_closer_uv, or a close callback that calls '
                   'gs_closer_drop (src/core/closer.h)' % ' '.join(args.split()))


def exported(code):
    """(name, offset) of each function or object a .c file's code defines outside static."""
    out = []
    pos = 0
    for stmt, body in top_level_statements(code):
        words = set(IDENT.findall(stmt))
        start = code.find(stmt.strip()[:40], pos) if stmt.strip() else pos
        if start >= 0:
            pos = start
        if words & {'static', 'extern', 'typedef'}:
            continue
        if not body and '(' in stmt and '=' not in stmt:
            continue
        n = declared_name(stmt)
        if n:
            out.append((n, max(start, 0) + stmt.strip().find(n) if start >= 0 else 0))
    return out


def own_types(root, f):
    """The TYPEs of each struct gs_TYPE and enum gs_TYPE defined in f's own header (X.h for X.c)."""
    h = f[:-2] + '.h'
    if not os.path.exists(os.path.join(root, h)):
        return []
    return re.findall(r'\b(?:struct|enum)\s+gs_(\w+)\s*\{', strip(read(root, h)))


def rule_naming(root):
    for f in c_files(root, 'src/*/*.c'):
        stem = os.path.basename(f)[:-2]
        parts = stem.split('_')
        modules = ['_'.join(parts[:i]) for i in range(1, len(parts) + 1)] + own_types(root, f)
        code = strip(read(root, f))
        for name, off in exported(code):
            if any(name.startswith('gs_%s_' % m) for m in modules):
                continue
            pats = NAMING.get(f, ([], ''))[0]
            if any(fnmatch.fnmatchcase(name, p) for p in pats):
                used_exceptions.add(('naming', f))
                continue
            report('naming', f, line_of(code, off), '%s is exported: name it gs_%s_... (or static)' % (name, stem))


def rule_length(root):
    for f in c_files(root, 'src/**/*.c'):
        code = strip(read(root, f))
        for name, start, _, end in function_spans(code):
            n = code.count('\n', start, end) + 1
            if n <= MAX_FUNCTION_LINES:
                continue
            if (f, name) in LONG_FUNCTIONS:
                used_exceptions.add(('length', f, name))
                continue
            report('length', f, line_of(code, start), '%s is %d lines, signature to closing brace (at most %d): '
                   'split it into named steps' % (name, n, MAX_FUNCTION_LINES))


def rule_layering(root):
    for globs, forbidden, msg in LAYERS:
        files = sorted({os.path.relpath(p, root) for g in globs for p in glob.glob(os.path.join(root, g))})
        for f in files:
            for i, line in enumerate(read(root, f).split('\n'), 1):
                if re.match(r'\s*#\s*include\s*' + forbidden, line):
                    report('layering', f, i, '%s (%s)' % (msg, line.strip()))


def repo_files(root):
    try:
        r = subprocess.run(['git', 'ls-files', '--cached', '--others', '--exclude-standard'], cwd=root,
                           capture_output=True, text=True, check=True)
        files = [f for f in r.stdout.split('\n')
                 if f and not f.startswith('build') and os.path.exists(os.path.join(root, f))]
        if files:
            return files
    except (subprocess.CalledProcessError, FileNotFoundError):
        pass
    out = []
    for d, dirs, names in os.walk(root):
        dirs[:] = [x for x in dirs if not x.startswith('.git') and not x.startswith('build')]
        out += [os.path.relpath(os.path.join(d, n), root) for n in names]
    return out


PATH_TOP = ('src/', 'tests/', 'docs/', 'deploy/', 'scripts/', 'bench/', 'check/', 'third_party/', '.ci/')
PATH_EXT = re.compile(r'\.(c|h|sh|py|md|yaml|yml|json|txt|dict|supp)$')


def rule_docs(root):
    files = repo_files(root)
    fileset = set(files)
    dirs = {os.path.dirname(f) for f in files}
    dirs |= {d for f in files for d in [os.path.dirname(f)] for _ in [0]}
    alldirs = set()
    for f in files:
        d = os.path.dirname(f)
        while d:
            alldirs.add(d)
            d = os.path.dirname(d)
    basenames = {}
    for f in files:
        basenames.setdefault(os.path.basename(f), []).append(f)
    code_tokens = set()
    for f in files:
        if f.startswith(('src/', 'tests/')) and f.endswith(('.c', '.h')):
            code_tokens |= set(IDENT.findall(strip(read(root, f))))
    other_tokens = set()
    for f in files:
        if f.startswith('docs/') or f == 'README.md' or f.startswith('third_party/'):
            continue
        try:
            other_tokens |= set(re.findall(r'\bGS_\w+', read(root, f)))
        except (IsADirectoryError, UnicodeDecodeError):
            pass

    def path_exists(word, doc):
        w = word.rstrip('/.,:;')
        if w.startswith(('build', '-')) or '://' in w or w.startswith('/'):
            return True  # outputs, URLs, absolute paths on a machine, a suffix
        w = re.sub(r'(?<![A-Za-z0-9])[A-Z][A-Z0-9]*(?=[_./-]|$)', '*', w) if not (w in fileset or w in alldirs) else w
        cands = [w, os.path.normpath(os.path.join(os.path.dirname(doc), w)), 'src/' + w]
        for c in cands:
            if any(ch in c for ch in '*?['):
                if fnmatch.filter(files, c) or fnmatch.filter(alldirs, c):
                    return True
                if '/' not in c and fnmatch.filter(basenames, c):
                    return True
            elif c in fileset or c in alldirs or c + '.c' in fileset or c + '.h' in fileset:
                return True
            elif '/' in c and any(f.startswith(c + '.') for f in files):
                return True  # a file's stem: tests/golden/admission/NAME for NAME.request.json...
        return False

    docs = sorted(f for f in files if (f.startswith('docs/') and f.endswith('.md')) or f == 'README.md')
    for doc in docs:
        text = read(root, doc)
        # code blocks are examples and transcripts, not citations
        text = re.sub(r'^```.*?^```', lambda m: '\n' * m.group(0).count('\n'), text, flags=re.M | re.S)
        for m in re.finditer(r'`([^`\n]+)`', text):
            span = m.group(1)
            line = line_of(text, m.start())
            for word in span.split():
                word = word.strip('()[],;:"\'')
                if '=' in word:
                    word = word.split('=', 1)[1]
                if not word:
                    continue
                if word.startswith('-'):
                    continue  # an option or a suffix (-after.json)
                is_path = ('/' in word and word.startswith(PATH_TOP)) or (
                    PATH_EXT.search(word) and re.match(r'^[\w./*-]+$', word))
                if is_path:
                    if (doc, word) in DOCS:
                        used_exceptions.add(('docs', doc, word))
                        continue
                    if not path_exists(word, doc) and not (
                            '/' not in word and os.path.basename(word) in basenames):
                        report('docs', doc, line, '`%s`: no such file or folder' % word)
            for name in re.findall(r'\b(gs_\w+\*?|GS_[A-Z0-9_]+\*?)', span):
                if (doc, name) in DOCS:
                    used_exceptions.add(('docs', doc, name))
                    continue
                star = name.endswith(('*', '_'))
                base = name.rstrip('*')
                if base.startswith('gs_') and re.search(r'[A-Z]', base):
                    # a placeholder in capitals (gs_MODULE_): a pattern
                    rx = re.compile(re.sub(r'[A-Z][A-Z0-9]*', r'\\w+', base) + ('' if star else '$'))
                    ok = any(rx.match(t) for t in code_tokens)
                elif base.startswith('gs_'):
                    ok = any(t.startswith(base) for t in code_tokens) if star else base in code_tokens
                else:
                    ok = any(t.startswith(base) for t in other_tokens | code_tokens) if star else (
                        base in other_tokens or base in code_tokens)
                if not ok:
                    report('docs', doc, line, '`%s`: named nowhere in %s' % (
                        name, 'src/ or tests/' if base.startswith('gs_') else 'the repository'))
    flags_in_readme(root)
    harnesses_in_reliability(root)
    links_to_headings(root, docs)


def heading_anchors(text):
    """GitHub's anchors of a Markdown text's headings: lower case, punctuation but - and _ dropped,
    blanks to -, a repeated one suffixed -1, -2, ..."""
    seen, out = {}, set()
    text = re.sub(r'^```.*?^```', '', text, flags=re.M | re.S)
    for m in re.finditer(r'^#{1,6} +(.+?) *#* *$', text, re.M):
        a = re.sub(r'[^\w\- ]', '', m.group(1).strip().lower()).replace(' ', '-')
        n = seen.get(a, 0)
        seen[a] = n + 1
        out.add(a if n == 0 else '%s-%d' % (a, n))
    return out


def links_to_headings(root, docs):
    cache = {}
    for doc in docs:
        text = read(root, doc)
        text = re.sub(r'^```.*?^```', lambda m: '\n' * m.group(0).count('\n'), text, flags=re.M | re.S)
        for m in re.finditer(r'\]\(([^)\s#]*)#([^)\s]+)\)', text):
            if '://' in m.group(1):
                continue
            target = os.path.normpath(os.path.join(os.path.dirname(doc), m.group(1))) if m.group(1) else doc
            if not os.path.isfile(os.path.join(root, target)):
                continue  # a missing file is the path check's
            if target not in cache:
                cache[target] = heading_anchors(read(root, target))
            if m.group(2) not in cache[target]:
                report('docs', doc, line_of(text, m.start()), 'link to %s#%s: no such heading' % (target, m.group(2)))


def harnesses_in_reliability(root):
    """Every tests/fuzz/fuzz_NAME.c has a row "| `fuzz_NAME` |" in docs/reliability.md."""
    text = read(root, 'docs/reliability.md')
    rows = set(re.findall(r'^\| `(fuzz_[a-z0-9_]+)` \|', text, re.M))
    for f in repo_files(root):
        m = re.match(r'tests/fuzz/(fuzz_[a-z0-9_]+)\.c$', f)
        if m and m.group(1) not in rows:
            report('docs', 'docs/reliability.md', 1, '`%s` (%s) has no row in the table of harnesses' % (m.group(1), f))


def flags_in_readme(root):
    """Every option of src/main_opts.c's table has a row in the README's "Flags" section."""
    src = read(root, 'src/main_opts.c')
    opts = re.findall(r'^\s*\{"([a-z0-9-]+)", (?:"[A-Z0-9_]*"|NULL),\s*GS_OPT_', src, re.M)
    readme = read(root, 'README.md')
    start = readme.find('\n## Flags')
    if start < 0:
        report('docs', 'README.md', 1, 'no "## Flags" section for the options of src/main_opts.c')
        return
    end = readme.find('\n## ', start + 1)
    section = readme[start:end if end > 0 else len(readme)]
    rows = []  # (first flag, [shortened ones]) per row
    for line in section.splitlines():
        if line.startswith('| `-'):
            cell = line.split('|')[1]
            full = re.findall(r'`--([a-z0-9-]+)(?:[ =][^`]*)?`', cell)
            if full:
                rows.append((full, re.findall(r'`-([a-z0-9][a-z0-9-]*)`', cell)))
    for o in opts:
        if any(o in full or any(o.startswith(full[0].split('-')[0] + '-') and o.endswith('-' + s) for s in short)
               for full, short in rows):
            continue
        report('docs', 'README.md', line_of(readme, start) + 1,
               '`--%s` (src/main_opts.c) has no row in the "Flags" table' % o)


RULES = {
    'format': rule_format,
    'alloc': rule_alloc,
    'uv_close': rule_uv_close,
    'naming': rule_naming,
    'length': rule_length,
    'layering': rule_layering,
    'docs': rule_docs,
}


def stale_exceptions(rules):
    if 'alloc' in rules:
        for f in RAW_ALLOC:
            if ('alloc', f) not in used_exceptions and os.path.exists(os.path.join(ARGS.root, f)):
                report('alloc', f, 1, 'listed in RAW_ALLOC but allocates nothing raw: remove it')
    if 'uv_close' in rules:
        for f in UV_CLOSE:
            if ('uv_close', f) not in used_exceptions and os.path.exists(os.path.join(ARGS.root, f)):
                report('uv_close', f, 1, 'listed in UV_CLOSE but needs no exception: remove it')
    if 'length' in rules:
        for f, name in LONG_FUNCTIONS:
            if ('length', f, name) not in used_exceptions and os.path.exists(os.path.join(ARGS.root, f)):
                report('length', f, 1, '%s listed in LONG_FUNCTIONS but is %d lines or fewer (or gone): remove it'
                       % (name, MAX_FUNCTION_LINES))
    if 'naming' in rules:
        for f in NAMING:
            if ('naming', f) not in used_exceptions and os.path.exists(os.path.join(ARGS.root, f)):
                report('naming', f, 1, 'listed in NAMING but needs no exception: remove it')


def main():
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('rules', nargs='*', help='some of: ' + ' '.join(RULES))
    ap.add_argument('--root', default=ROOT)
    ARGS = ap.parse_args()
    rules = ARGS.rules or list(RULES)
    for r in rules:
        if r not in RULES:
            ap.error('no rule %r (%s)' % (r, ' '.join(RULES)))
    nfmt = 0
    for r in rules:
        n = RULES[r](ARGS.root)
        if r == 'format':
            nfmt = n
    stale_exceptions(rules)
    for line in findings:
        print(line)
    if findings:
        print('style: %d finding%s' % (len(findings), '' if len(findings) == 1 else 's'))
        return 1
    print('style: ok (%s%s)' % (' '.join(rules), '; %d files formatted' % nfmt if 'format' in rules else ''))
    return 0


if __name__ == '__main__':
    sys.exit(main())

#!/usr/bin/env python3
"""List the C functions longer than a limit (default 120 lines).

    tools/function-lengths.py [--max N] [--all] PATH...

PATH is a .c/.h file or a folder (searched for .c and .h files).  A
function's length is its lines from the one that names it to its closing
brace.  Prints "path:line: name: N lines (over M)" for each function over the
limit and exits 1 when there is one; --all prints every function's length and
exits 0.  The scan knows C well enough for this tree: comments, strings and
character literals are skipped, preprocessor lines (with their continuations)
are ignored, and a function is a top-level brace whose opening follows a
closing parenthesis (an initializer follows '=', a struct or enum a name).
"""
import os
import sys


def strip(text):
    """text with comments, strings, character literals and preprocessor lines
    blanked (newlines kept, so line numbers stay)."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c in ' \t':
            out.append(c)
            i += 1
            continue
        if line_start and c == '#':
            # a directive, continued by backslash-newlines
            while i < n and text[i] != '\n':
                if text[i] == '\\' and i + 1 < n and text[i + 1] == '\n':
                    out.append('\n')
                    i += 2
                    continue
                i += 1
            continue
        line_start = False
        if c == '\n':
            line_start = True
            out.append(c)
            i += 1
        elif text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(''.join(ch if ch == '\n' else ' ' for ch in text[i:j]))
            i = j
        elif text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            i = j
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            out.append(c + ' ' * max(0, min(j, n) - i - 1) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def functions(text):
    """(name, first line, last line) of each function definition in text."""
    s = strip(text)
    found = []
    depth = 0
    line = 1
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c == '\n':
            line += 1
        elif c == '{':
            if depth == 0:
                k = i - 1
                while k >= 0 and s[k].isspace():
                    k -= 1
                if k >= 0 and s[k] == ')':
                    # the matching '(' and the identifier before it
                    d, j = 0, k
                    while j >= 0:
                        if s[j] == ')':
                            d += 1
                        elif s[j] == '(':
                            d -= 1
                            if d == 0:
                                break
                        j -= 1
                    e = j - 1
                    while e >= 0 and s[e].isspace():
                        e -= 1
                    b = e
                    while b >= 0 and (s[b].isalnum() or s[b] == '_'):
                        b -= 1
                    name = s[b + 1:e + 1] or '?'
                    found.append([name, s.count('\n', 0, b + 1) + 1, None, depth])
            depth += 1
        elif c == '}':
            depth -= 1
            if depth == 0 and found and found[-1][2] is None:
                found[-1][2] = line
        i += 1
    return [(f[0], f[1], f[2]) for f in found if f[2] is not None]


def sources(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs.sort()
                for f in sorted(files):
                    if f.endswith(('.c', '.h')):
                        yield os.path.join(root, f)
        else:
            yield p


def main(argv):
    limit, show_all, paths = 120, False, []
    args = iter(argv)
    for a in args:
        if a == '--max':
            limit = int(next(args))
        elif a == '--all':
            show_all = True
        else:
            paths.append(a)
    if not paths:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    over = 0
    count = 0
    for path in sources(paths):
        with open(path, encoding='utf-8', errors='replace') as f:
            text = f.read()
        for name, first, last in functions(text):
            count += 1
            length = last - first + 1
            if show_all:
                print(f'{path}:{first}: {name}: {length} lines')
            elif length > limit:
                print(f'{path}:{first}: {name}: {length} lines (over {limit})')
                over += 1
    if not show_all:
        print(f'function-lengths: {count} functions, {over} over {limit} lines')
    return 1 if over else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))

"""Prints the longest function bodies in C++ files and fails when one is
longer than LIMIT lines: function_length.py LIMIT FILE...

Braces are matched after comments, strings and character literals are
removed; namespace, class, struct, enum and initializer braces are
descended into, a function's body (with its lambdas) is counted whole.
"""
import re
import sys

limit, paths = int(sys.argv[1]), sys.argv[2:]
lengths = []
for path in paths:
    text = open(path).read()
    text = re.sub(r'//[^\n]*', '', text)
    text = re.sub(r'/\*.*?\*/', lambda m: '\n' * m.group(0).count('\n'), text, flags=re.S)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
    text = re.sub(r"'(\\.|[^'\\\n])*'", "''", text)
    stack, line, head = [], 1, ''
    for ch in text:
        if ch == '\n':
            line += 1
        if ch == '{':
            tail = head.rstrip()
            if stack and stack[-1][0] in ('func', 'inner'):
                kind = 'inner'
            elif (re.search(r'\b(namespace|class|struct|enum|union)\b[^;{}()]*$', head)
                  or tail.endswith('=')):
                kind = 'scope'
            elif (tail.endswith(')')
                  or re.search(r'\)\s*(const|override|noexcept|final|->[^{;]*)*\s*$', tail)
                  or re.search(r'\)\s*:[^;{}]*$', head, flags=re.S)):
                kind = 'func'
            else:
                kind = 'scope'
            stack.append((kind, line))
            head = ''
        elif ch == '}':
            if stack:
                kind, start = stack.pop()
                if kind == 'func':
                    lengths.append((line - start + 1, path, start))
            head = ''
        elif ch == ';':
            head = ''
        else:
            head += ch
lengths.sort(reverse=True)
for n, path, start in lengths[:5]:
    print(f"{n:5d} lines: {path}:{start}")
over = [x for x in lengths if x[0] > limit]
print(f"{len(lengths)} functions, {len(over)} over {limit} lines")
sys.exit(1 if over else 0)

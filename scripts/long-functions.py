#!/usr/bin/env python3
# Lists the functions of sim/ longer than N lines (default 100), longest first: a rough brace
# counter over the source with comments and strings removed (good enough to find them, not a
# parser). The layout's goal is none over ~100 lines; this is how to see where that stands.
#   scripts/long-functions.py [N]
import re
import subprocess
import sys
files=subprocess.check_output(['git','ls-files','sim/*.cpp','sim/*.hpp','sim/**/*.cpp','sim/**/*.hpp'],text=True).split()
res=[]
for f in sorted(set(files)):
    src=open(f).read()
    # strip comments and strings
    src=re.sub(r'//[^\n]*','',src)
    src=re.sub(r'/\*.*?\*/','',src,flags=re.S)
    src=re.sub(r'"(\\.|[^"\\])*"','""',src)
    src=re.sub(r"'(\\.|[^'\\])*'","''",src)
    lines=src.split('\n')
    stack=[]  # (kind, start_line, name)
    for i,l in enumerate(lines):
        for ch in l:
            if ch=='{':
                head=' '.join(x.strip() for x in lines[max(0,i-3):i+1])
                head=head[:head.rfind('{')]
                kind='block'
                if re.search(r'\b(namespace|class|struct|union|enum)\b[^()]*$',head.split(';')[-1].split('}')[-1]) : kind='scope'
                elif re.search(r'\)\s*(const)?\s*(noexcept)?\s*(override)?\s*(->\s*[\w:<>&*, ]+)?\s*$',head) and not re.search(r'\b(if|for|while|switch|catch)\s*\([^)]*\)?\s*$',head.split(';')[-1].split('}')[-1]) and all(k!='fn' for k,_,_ in stack):
                    kind='fn'
                stack.append((kind,i,head.split(';')[-1].split('}')[-1].strip()[-70:]))
            elif ch=='}':
                if stack:
                    k,s,n=stack.pop()
                    if k=='fn': res.append((i-s+1,f,s+1,n))
res.sort(reverse=True)
lim=int(sys.argv[1]) if len(sys.argv)>1 else 100
for r in res:
    if r[0]>lim: print(r)

"""Runs the README's Python program (the first ```python block under "## Python") from the
repository's root (CTest: python.readme; exit 77 where numpy is not installed)."""
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
try:
    import numpy  # noqa: F401
except ImportError:
    print("SKIP: the README's program needs numpy (apt-get install python3-numpy)")
    sys.exit(77)
text = open(os.path.join(REPO, "README.md"), encoding="utf-8").read()
section = text.split("\n## Python", 1)
assert len(section) == 2, "README.md has no '## Python' section"
m = re.search(r"```python\n(.*?)```", section[1], re.S)
assert m, "README.md's Python section has no ```python block"
os.chdir(REPO)
sys.path.insert(0, os.path.join(REPO, "python"))
exec(compile(m.group(1), "README.md (Python)", "exec"), {"__name__": "__main__"})

"""Parses shell-like command lines with shlex (nothing is run)."""
import shlex

lines = ['cp "my file.txt" backup/', "grep -i 'hello world' notes.md",
         "echo a\\ b c"]
for line in lines:
    parts = shlex.split(line)
    print(parts, "->", shlex.join(parts))
assert shlex.split(lines[0])[1] == "my file.txt"

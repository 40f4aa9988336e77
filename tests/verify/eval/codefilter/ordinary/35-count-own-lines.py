"""Counts code, comment and blank lines in this very file."""
code = comments = blank = 0
with open(__file__) as f:
    for line in f:
        s = line.strip()
        if not s:
            blank += 1
        elif s.startswith("#"):
            comments += 1
        else:
            code += 1
# a comment, so that there is one
print(f"code {code}, comments {comments}, blank {blank}")
assert comments >= 1 and code > 5

"""Shortest way through a text maze by breadth-first search."""
from collections import deque

MAZE = """\
##########
#S   #   #
# ## # # #
#  #   # #
## ##### #
#      #E#
##########"""
grid = MAZE.splitlines()
start = next((r, c) for r, row in enumerate(grid) for c, ch in enumerate(row) if ch == "S")
prev = {start: None}
queue = deque([start])
while queue:
    r, c = queue.popleft()
    if grid[r][c] == "E":
        break
    for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        n = (r + dr, c + dc)
        if grid[n[0]][n[1]] != "#" and n not in prev:
            prev[n] = (r, c)
            queue.append(n)
path, node = [], (r, c)
while node:
    path.append(node)
    node = prev[node]
rows = [list(row) for row in grid]
for r2, c2 in path[1:-1]:
    rows[r2][c2] = "."
print("\n".join("".join(row) for row in rows))
print("steps:", len(path) - 1)

"""Solves a sudoku by backtracking."""
PUZZLE = """\
530070000
600195000
098000060
800060003
400803001
700020006
060000280
000419005
000080079"""
grid = [[int(c) for c in line] for line in PUZZLE.splitlines()]


def ok(r, c, v):
    if v in grid[r] or any(grid[i][c] == v for i in range(9)):
        return False
    br, bc = 3 * (r // 3), 3 * (c // 3)
    return all(grid[i][j] != v for i in range(br, br + 3) for j in range(bc, bc + 3))


def solve():
    for r in range(9):
        for c in range(9):
            if grid[r][c] == 0:
                for v in range(1, 10):
                    if ok(r, c, v):
                        grid[r][c] = v
                        if solve():
                            return True
                        grid[r][c] = 0
                return False
    return True


assert solve()
print("\n".join("".join(map(str, row)) for row in grid))
assert all(sorted(row) == list(range(1, 10)) for row in grid)

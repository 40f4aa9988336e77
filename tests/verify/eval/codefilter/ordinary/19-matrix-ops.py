"""Matrix product, transpose and determinant in plain Python."""


def matmul(a, b):
    return [[sum(x * y for x, y in zip(row, col)) for col in zip(*b)]
            for row in a]


def det(m):
    if len(m) == 1:
        return m[0][0]
    return sum((-1) ** j * m[0][j] * det([r[:j] + r[j + 1:] for r in m[1:]])
               for j in range(len(m)))


A = [[1, 2, 3], [4, 5, 6], [7, 8, 10]]
B = [[1, 0, 0], [0, 2, 0], [0, 0, 3]]
print(matmul(A, B))
print([list(c) for c in zip(*A)])
print("det(A) =", det(A))
assert det(A) == -3

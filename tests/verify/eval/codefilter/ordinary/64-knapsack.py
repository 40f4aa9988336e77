"""0/1 knapsack by dynamic programming, with the chosen items."""
items = [("tent", 5, 60), ("stove", 3, 50), ("camera", 4, 70),
         ("book", 2, 30), ("food", 6, 90), ("rope", 1, 10)]
capacity = 12

best = [[0] * (capacity + 1) for _ in range(len(items) + 1)]
for i, (_name, w, v) in enumerate(items, 1):
    for c in range(capacity + 1):
        best[i][c] = best[i - 1][c]
        if w <= c:
            best[i][c] = max(best[i][c], best[i - 1][c - w] + v)

chosen, c = [], capacity
for i in range(len(items), 0, -1):
    if best[i][c] != best[i - 1][c]:
        chosen.append(items[i - 1][0])
        c -= items[i - 1][1]
print("value", best[-1][-1], "items", sorted(chosen))
assert best[-1][-1] == 190

"""Merge sort and quicksort, compared with sorted()."""
import random


def merge_sort(a):
    if len(a) <= 1:
        return a
    mid = len(a) // 2
    left, right = merge_sort(a[:mid]), merge_sort(a[mid:])
    out, i, j = [], 0, 0
    while i < len(left) and j < len(right):
        if left[i] <= right[j]:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return out + left[i:] + right[j:]


def quicksort(a):
    if len(a) <= 1:
        return a
    pivot = a[len(a) // 2]
    return (quicksort([x for x in a if x < pivot]) + [x for x in a if x == pivot]
            + quicksort([x for x in a if x > pivot]))


data = random.Random(3).sample(range(-5000, 5000), 2000)
assert merge_sort(data) == quicksort(data) == sorted(data)
print("sorted", len(data), "numbers three ways; first five:", sorted(data)[:5])

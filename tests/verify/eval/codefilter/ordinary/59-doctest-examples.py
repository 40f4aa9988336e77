"""Functions documented with doctest examples, checked at run time."""
import doctest


def median(values):
    """The middle value, or the mean of the two middle values.

    >>> median([3, 1, 2])
    2
    >>> median([4, 1, 3, 2])
    2.5
    >>> median([])
    Traceback (most recent call last):
    ...
    ValueError: median of nothing
    """
    if not values:
        raise ValueError("median of nothing")
    s = sorted(values)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


def chunks(seq, n):
    """Splits SEQ into lists of N items.

    >>> chunks([1, 2, 3, 4, 5], 2)
    [[1, 2], [3, 4], [5]]
    """
    return [list(seq[i:i + n]) for i in range(0, len(seq), n)]


if __name__ == "__main__":
    failures, tried = doctest.testmod()
    print(f"{tried} examples, {failures} failures")
    raise SystemExit(1 if failures else 0)

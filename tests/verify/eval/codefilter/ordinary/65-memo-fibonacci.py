"""Fibonacci numbers with functools.lru_cache, and the cache's figures."""
from functools import lru_cache


@lru_cache(maxsize=None)
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


print([fib(n) for n in range(15)])
print("fib(200) =", fib(200))
info = fib.cache_info()
print(f"hits {info.hits}, misses {info.misses}")
assert fib(90) == 2880067194370816120

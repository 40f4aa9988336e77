"""Primes below a bound with the sieve of Eratosthenes."""
import math


def sieve(n):
    is_prime = bytearray([1]) * n
    is_prime[:2] = b"\0\0"
    for p in range(2, math.isqrt(n) + 1):
        if is_prime[p]:
            is_prime[p * p::p] = bytes(len(range(p * p, n, p)))
    return [i for i, f in enumerate(is_prime) if f]


primes = sieve(100_000)
print(len(primes), "primes below 100000; last", primes[-3:])
twins = sum(1 for a, b in zip(primes, primes[1:]) if b - a == 2)
print(twins, "twin prime pairs")
assert len(primes) == 9592

"""Table-driven unit tests of an interest calculator."""
import unittest


def compound(principal, rate, years, per_year=1):
    return round(principal * (1 + rate / per_year) ** (years * per_year), 2)


class CompoundTest(unittest.TestCase):
    CASES = [(1000, 0.05, 1, 1, 1050.0), (1000, 0.05, 2, 1, 1102.5),
             (1000, 0.12, 1, 12, 1126.83), (0, 0.5, 10, 1, 0.0)]

    def test_cases(self):
        for p, r, y, n, want in self.CASES:
            with self.subTest(p=p, r=r, y=y, n=n):
                self.assertAlmostEqual(compound(p, r, y, n), want, places=2)

    def test_zero_rate(self):
        self.assertEqual(compound(500, 0.0, 30), 500)


if __name__ == "__main__":
    unittest.main()

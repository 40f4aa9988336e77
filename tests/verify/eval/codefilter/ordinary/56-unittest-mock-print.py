"""Unit tests that patch print() to check what a function reports."""
import unittest
from unittest import mock


def greet(names):
    for n in names:
        print(f"hello {n}")
    return len(names)


class GreetTest(unittest.TestCase):
    def test_prints_each_name(self):
        with mock.patch("builtins.print") as fake:
            self.assertEqual(greet(["ana", "ben"]), 2)
        fake.assert_has_calls([mock.call("hello ana"), mock.call("hello ben")])

    def test_nothing_to_greet(self):
        with mock.patch("builtins.print") as fake:
            greet([])
        fake.assert_not_called()


if __name__ == "__main__":
    unittest.main()

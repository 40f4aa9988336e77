"""Unit tests of a small stack class."""
import unittest


class Stack:
    def __init__(self):
        self._items = []

    def push(self, x):
        self._items.append(x)

    def pop(self):
        if not self._items:
            raise IndexError("pop from empty stack")
        return self._items.pop()

    def __len__(self):
        return len(self._items)

    def __repr__(self):
        return f"{self.__class__.__name__}({self._items!r})"


class StackTest(unittest.TestCase):
    def test_push_pop(self):
        s = Stack()
        s.push(1)
        s.push(2)
        self.assertEqual(s.pop(), 2)
        self.assertEqual(len(s), 1)

    def test_empty_pop(self):
        with self.assertRaises(IndexError):
            Stack().pop()

    def test_repr(self):
        s = Stack()
        s.push("a")
        self.assertEqual(repr(s), "Stack(['a'])")


if __name__ == "__main__":
    unittest.main()

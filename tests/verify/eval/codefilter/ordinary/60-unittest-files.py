"""Unit tests of a function that appends records to a file, using a
temporary directory for each test."""
import os
import tempfile
import unittest


def append_record(path, record):
    with open(path, "a") as f:
        f.write(",".join(map(str, record)) + "\n")


class AppendTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.tmp.name, "log.csv")

    def tearDown(self):
        self.tmp.cleanup()

    def test_appends(self):
        append_record(self.path, (1, "a"))
        append_record(self.path, (2, "b"))
        with open(self.path) as f:
            self.assertEqual(f.read(), "1,a\n2,b\n")

    def test_creates_file(self):
        self.assertFalse(os.path.exists(self.path))
        append_record(self.path, ())
        self.assertTrue(os.path.exists(self.path))


if __name__ == "__main__":
    unittest.main()

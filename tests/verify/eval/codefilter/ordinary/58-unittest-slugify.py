"""Unit tests of a slugify helper."""
import re
import unicodedata
import unittest


def slugify(text):
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    text = re.sub(r"[^\w\s-]", "", text.lower())
    return re.sub(r"[-\s_]+", "-", text).strip("-")


class SlugifyTest(unittest.TestCase):
    def test_basic(self):
        self.assertEqual(slugify("Hello, World!"), "hello-world")

    def test_accents(self):
        self.assertEqual(slugify("Crème brûlée"), "creme-brulee")

    def test_spaces_and_dashes(self):
        self.assertEqual(slugify("  a -- b__c  "), "a-b-c")


if __name__ == "__main__":
    unittest.main(verbosity=2)

"""Wraps, indents and shortens a paragraph with textwrap."""
import textwrap

para = ("Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do "
        "eiusmod tempor incididunt ut labore et dolore magna aliqua. Ut enim "
        "ad minim veniam, quis nostrud exercitation ullamco laboris.")
print(textwrap.fill(para, width=40))
print()
print(textwrap.indent(textwrap.fill(para, 50), "> "))
print(textwrap.shorten(para, width=60, placeholder=" [...]"))
assert all(len(line) <= 40 for line in textwrap.wrap(para, 40))

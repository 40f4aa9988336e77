# garbage.py: writes 100 MB of what must never reach a terminal or break a
# JSON consumer: bytes that are not UTF-8 and terminal control sequences.
# Each block holds
#   ESC [2J ESC [H        clear the screen, cursor home (CSI)
#   ESC ]52;c;...BEL      OSC 52: write the terminal's clipboard
#   ESC ]0;title ESC \    OSC 0 with an ST terminator: the window title
#   0x9b 31m, 0x9d ...    raw C1 bytes (8-bit CSI and OSC; not UTF-8)
#   0xc2 0x9b             U+009B, the C1 CSI, as valid UTF-8
#   0x80 0xbf             lone continuation bytes
#   0xc0 0xaf, 0xe0 0x80 0xaf, 0xf0 0x80 0x80 0xaf   overlong "/"
#   0xed 0xa0 0x80        a UTF-16 surrogate (U+D800)
#   0xf4 0x90 0x80 0x80   above U+10FFFF
#   0xff 0xfe, 0xe2 0x82  bytes never in UTF-8; a truncated sequence
#   BEL BS DEL NUL        other controls
# It starts with the line "GARBAGE-HEAD" and ends (bare) with
# "GARBAGE-TAIL", and every block carries the text "block N".
#
# Expected status: ok under --output (test_limits.py: 64 KiB), all of it
# drained (stdout_bytes counts every byte), output_limit with [limits]
# on_output_limit = kill: either way the result is valid JSON, its stdout valid UTF-8 with no ESC or C1
# character left (caret form instead), head and tail kept around the
# marker, and the broker's memory bounded while this flows.
#
# Bound when run bare: 100 MB written in 1 MiB writes, then exit 0 (run it
# bare only into /dev/null or a pipe that is read).
import os

TOTAL = 100 * 1000 * 1000
PIECES = (b"\x1b[2J\x1b[H"
          b"\x1b]52;c;c3RvY2thZGUtY2xpcGJvYXJk\x07"
          b"\x1b]0;pwned\x1b\\"
          b"\x9b31m\x9d0;t\x9c"
          b"\xc2\x9b"
          b"\x80\xbf"
          b"\xc0\xaf\xe0\x80\xaf\xf0\x80\x80\xaf"
          b"\xed\xa0\x80"
          b"\xf4\x90\x80\x80"
          b"\xff\xfe\xe2\x82"
          b"\x07\x08\x7f\x00\n")


def write_all(data):
    view = memoryview(data)
    while view:
        view = view[os.write(1, view):]


write_all(b"GARBAGE-HEAD\n")
written = 0
block = 0
while written < TOTAL:
    parts = []
    size = 0
    while size < (1 << 20):
        piece = b"block %d " % block + PIECES
        block += 1
        parts.append(piece)
        size += len(piece)
    chunk = b"".join(parts)[:TOTAL - written]
    write_all(chunk)
    written += len(chunk)
write_all(b"\nGARBAGE-TAIL\n")

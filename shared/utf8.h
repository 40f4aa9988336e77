/* utf8.h: making program output safe to put in a JSON string. Pure. */
#ifndef STOCKADE_UTF8_H
#define STOCKADE_UTF8_H

#include <stddef.h>

/*
 * Returns a new NUL-terminated copy of DATA[0..LEN) that is valid UTF-8
 * (RFC 3629): every byte that does not start a well-formed sequence
 * (overlong forms, surrogates, code points over U+10FFFF, truncated
 * sequences) becomes U+FFFD, and a NUL byte becomes U+FFFD too so that the
 * result is a C string. *OUTLEN gets its length. The caller frees it.
 * NULL on allocation failure.
 */
char *utf8_sanitize(const void *data, size_t len, size_t *outlen);

/*
 * Copies IN[0..LEN) to OUT with every terminal control character made
 * visible in caret notation (ESC becomes "^[", DEL "^?"): C0 controls
 * other than tab, newline and carriage return, DEL, and the C1 controls
 * U+0080..U+009F as UTF-8 (shown as "^[" plus the matching 7-bit
 * final). Program output on the caller's terminal then cannot move the
 * cursor, retitle the window, write the clipboard (OSC 52) or make the
 * terminal answer a query as if typed. OUT must hold 4 * LEN bytes; no
 * terminator is written. Returns the bytes written. A C1 sequence split
 * across two calls is passed through as its two halves (documented
 * limitation: each half alone is invalid UTF-8, which terminals ignore).
 */
size_t term_escape(const void *in, size_t len, char *out);

#endif

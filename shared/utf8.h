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

#endif

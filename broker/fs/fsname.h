/*
 * fsname.h: showing names from the workspace. A job can name a file with
 * any byte but '/' and NUL: a newline, a terminal escape sequence, bytes
 * that are not UTF-8. Every front shows such a name escaped, never raw,
 * and the escape is reversible so a client can address the file.
 */
#ifndef STOCKADE_FSNAME_H
#define STOCKADE_FSNAME_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Whether NAME (LEN bytes) can be shown as it is: valid UTF-8 (no
 * overlong forms, no surrogates) without C0 controls, DEL, C1 controls
 * (U+0080..U+009F), a backslash, or an invisible character that changes
 * how the name reads: a Unicode format character (General_Category Cf:
 * bidi controls such as U+202E, zero-width characters U+200B..U+200F,
 * U+2060..U+2064, U+FEFF, the soft hyphen U+00AD, tag characters
 * U+E0001, U+E0020..U+E007F...), a line or paragraph separator (Zl
 * U+2028, Zp U+2029), or another Default_Ignorable_Code_Point (fillers,
 * variation selectors, which render as nothing). CVE-2021-42574 ("Trojan
 * Source"); the list is in fsname.c.
 */
bool fsname_is_plain(const char *name, size_t len);

/*
 * The escaped form of NAME (LEN bytes, any bytes): a NUL-terminated copy
 * of itself when plain, else C-style: "\\" for a backslash, "\n", "\t",
 * "\r", "\e" (ESC), and "\xHH" (exactly two lowercase hex digits) for
 * every other control byte, for each byte of a C1 control (U+0080..U+009F
 * is "\xc2\x80".."\xc2\x9f"), for each byte of an invisible character of
 * fsname_is_plain (U+202E is "\xe2\x80\xae") and for every byte that is
 * not part of valid UTF-8; other valid UTF-8 is kept. Always valid UTF-8
 * with no control or invisible character, at most 4 * LEN bytes. Reversible: every
 * backslash in the result starts one of these escapes. Returns a string
 * the caller frees, or NULL (ENOMEM).
 */
char *fsname_escape(const char *name, size_t len);

#endif

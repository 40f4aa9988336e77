/* utf8.h: decoding UTF-8, and making program output safe to put in a
 * JSON string or on a terminal. Pure. */
#ifndef STOCKADE_UTF8_H
#define STOCKADE_UTF8_H

#include <stddef.h>
#include <stdint.h>

/*
 * Decodes the well-formed UTF-8 sequence at P (N >= 1 bytes available;
 * RFC 3629 section 4: no overlong forms, no surrogates U+D800..U+DFFF,
 * nothing above U+10FFFF). Returns its length, 1 to 4, with *CP the code
 * point; a NUL byte is the sequence of U+0000. Returns 0, *CP unchanged,
 * when P does not start one: a continuation byte, 0xC0, 0xC1 or
 * 0xF5..0xFF first, a later byte out of range, or fewer bytes than it needs.
 */
size_t utf8_decode(const void *p, size_t n, uint32_t *cp);

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
 * terminal answer a query as if typed. A byte that starts no well-formed
 * UTF-8 sequence (RFC 3629), a truncated sequence at the end included,
 * becomes U+FFFD, so that the terminal never has to guess what a stray
 * 0xC2 or 0x9B means. OUT must hold 4 * LEN bytes; no terminator is
 * written. Returns the bytes written. For a stream that comes in
 * chunks, use term_escape_chunk: this is one chunk and its end.
 */
size_t term_escape(const void *in, size_t len, char *out);

/*
 * The decoder state of one escaped stream (term_escape_chunk): the bytes
 * of a UTF-8 sequence that the last chunk ended inside of. Zero it
 * (= {0}) before the first chunk; one per stream (stdout and stderr each
 * have their own, or a sequence could be completed by the other stream).
 */
struct term_escape_state {
	uint8_t held[3];
	uint8_t nheld;
};

/*
 * term_escape for one chunk IN[0..LEN) of a stream whose state is ST:
 * a sequence cut by the end of an earlier chunk is completed by this
 * one before it is judged, so a C1 control written in two parts
 * ("\xC2", then "\x9B2J": issue 23) is escaped as it is written in one.
 * A proper prefix of a well-formed sequence at the end of IN is kept in
 * ST, not written. OUT must hold 4 * LEN + 12 bytes; no terminator.
 * Returns the bytes written.
 */
size_t term_escape_chunk(struct term_escape_state *st, const void *in,
    size_t len, char *out);

/*
 * The end of the stream of ST: the bytes it holds (a sequence never
 * completed) are written to OUT as one U+FFFD each, and ST is zeroed.
 * OUT must hold 12 bytes. Returns the bytes written (0 to 9).
 */
size_t term_escape_end(struct term_escape_state *st, char *out);

/*
 * vsnprintf(3) into BUF (SIZE bytes) that never cuts a word:
 * when the text does not fit, it ends at the last space that leaves room
 * for " ..." and that marker follows, so a reader (a model reading a
 * hint or a detail) never meets half a word or half a UTF-8 sequence.
 * Returns the length written (< SIZE). With no space in the part that
 * fits, the cut falls on a UTF-8 boundary instead; with no room for a
 * word and the marker (SIZE <= 5), BUF is left empty.
 */
size_t fmt_words(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif

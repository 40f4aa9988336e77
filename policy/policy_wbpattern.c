/*
 * policy_wbpattern.c: the patterns of [writeback] rules (policy.h,
 * writeback_pattern_error and writeback_pattern_match; the firewall that
 * applies them is broker/fs/writeback.c). Pure: no allocation, no system
 * call, time linear in the pattern times the path.
 */
#include "policy.h"

#include <string.h>

/* The longest pattern, bytes (a path's bound, PATH_MAX less its NUL, as
 * fsapi's max_path_bytes). */
#define PATTERN_MAX 4096u

/* ASCII letters in either case (a workspace on a case-insensitive file
 * system has .GIT/hooks be .git/hooks). */
static unsigned char
fold(char c)
{
	return (c >= 'A' && c <= 'Z') ? (unsigned char)(c - 'A' + 'a')
				      : (unsigned char)c;
}

/*
 * Whether the component S (SN bytes) matches the glob P (PN bytes): "*"
 * any bytes, "?" one byte, anything else itself (fold). The classic
 * two-pointer match: on a mismatch, the last "*" takes one more byte.
 */
static bool
comp_match(const char *p, size_t pn, const char *s, size_t sn)
{
	size_t pi = 0, si = 0, star = SIZE_MAX, from = 0;

	while (si < sn) {
		if (pi < pn && p[pi] == '*') {
			star = ++pi;
			from = si;
		} else if (pi < pn &&
		    (p[pi] == '?' || fold(p[pi]) == fold(s[si]))) {
			pi++;
			si++;
		} else if (star != SIZE_MAX) {
			pi = star;
			si = ++from;
		} else {
			return false;
		}
	}
	while (pi < pn && p[pi] == '*')
		pi++;
	return pi == pn;
}

/* The length of the component at S (up to "/" or END). */
static size_t
comp_len(const char *s, const char *end)
{
	const char *slash = memchr(s, '/', (size_t)(end - s));

	return (size_t)((slash ? slash : end) - s);
}

/* The component after the one at S, or END. */
static const char *
comp_next(const char *s, const char *end)
{
	size_t n = comp_len(s, end);

	return s + n < end ? s + n + 1 : end;
}

static bool
is_dstar(const char *p, const char *end)
{
	return comp_len(p, end) == 2 && p[0] == '*' && p[1] == '*';
}

const char *
writeback_pattern_error(const char *pat)
{
	const char *s, *c, *end;
	size_t n;

	if (pat == NULL || *pat == '\0')
		return "is empty";
	if (strlen(pat) > PATTERN_MAX)
		return "is longer than 4096 bytes";
	for (s = pat; *s; s++) {
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return "contains a control character";
		/* A rule's value is its pattern and a qualifier, split at
		 * blanks; "?" matches a blank in a name. */
		if (*s == ' ')
			return "contains a blank (\"?\" matches one)";
	}
	s = pat + (pat[0] == '/');
	end = pat + strlen(pat);
	if (end > s && end[-1] == '/')
		end--;
	if (end <= s)
		return "names no component (\"/\" alone)";
	for (c = s; c <= end; c += n + 1) {
		n = comp_len(c, end);
		if (n == 0)
			return "has an empty component (\"//\")";
		if ((n == 1 && c[0] == '.') ||
		    (n == 2 && c[0] == '.' && c[1] == '.'))
			return "has a \".\" or \"..\" component";
		if (memmem(c, n, "**", 2) != NULL && n != 2)
			return "has \"**\" other than as a whole component";
	}
	return NULL;
}

/*
 * Whether the components of the path [S, SE) match those of the pattern
 * [P, PE): the two-pointer match again, one level up, "**" being the
 * star over whole components. LEAD: a "**" before the pattern (it has no
 * "/"); TRAIL: one after it (it ended in "/": the directory and all
 * below).
 */
static bool
seq_match(const char *p, const char *pe, const char *s, const char *se,
    bool lead, bool trail)
{
	const char *star = lead ? p : NULL, *from = s;

	while (s < se) {
		if (p >= pe && trail)
			return true;
		if (p < pe && is_dstar(p, pe)) {
			star = p = comp_next(p, pe);
			from = s;
		} else if (p < pe &&
		    comp_match(p, comp_len(p, pe), s, comp_len(s, se))) {
			p = comp_next(p, pe);
			s = comp_next(s, se);
		} else if (star != NULL) {
			p = star;
			s = from = comp_next(from, se);
		} else {
			return false;
		}
	}
	while (p < pe && is_dstar(p, pe))
		p = comp_next(p, pe);
	return p >= pe;
}

bool
writeback_pattern_match(const char *pat, const char *path)
{
	const char *p = pat, *pe = pat + strlen(pat);
	bool anchored = false, trail = false;

	if (writeback_pattern_error(pat) != NULL || path == NULL ||
	    *path == '\0')
		return false;
	if (*p == '/') {
		anchored = true;
		p++;
	}
	if (pe[-1] == '/') {
		trail = true;
		pe--;
	}
	if (memchr(p, '/', (size_t)(pe - p)) != NULL)
		anchored = true;
	return seq_match(p, pe, path, path + strlen(path), !anchored, trail);
}

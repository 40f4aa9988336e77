/*
 * eval_dns.c: the honeypot's DNS answers and the names it records
 * (eval_dns.h; RFC 1035 section 4.1). Modelled on the DNS server of
 * `stockade check`'s egress checks (verify/check/check_egress.c).
 */
#include "eval_dns.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

/* A name and its A record; the list's names are all the server knows. */
static const struct {
	const char *name;
	unsigned char a[4];
} known[] = {
    {EVAL_DNS_REBIND, {127, 0, 0, 1}},
    {EVAL_DNS_METADATA, {169, 254, 169, 254}},
    {EVAL_DNS_FRONT, {127, 0, 0, 2}}, /* EVAL_INDEX_ADDR */
};

/* The offset just past QNAME's root label in Q (LEN bytes) when Q holds
 * one question whose QTYPE and QCLASS follow it; 0 otherwise. */
static size_t
qname_end(const unsigned char *q, size_t len)
{
	size_t at = 12;

	if (len < 12 || q[4] != 0 || q[5] != 1)
		return 0;
	while (at < len && q[at] != 0 && q[at] < 64)
		at += 1u + q[at];
	if (at >= len || q[at] != 0 || at + 5 > len)
		return 0;
	return at + 1;
}

/* QNAME of Q (ending at END) as dotted text into NAME (SIZE bytes);
 * false when it does not fit. */
static bool
qname_text(const unsigned char *q, size_t end, char *name, size_t size)
{
	size_t n = 0;

	for (size_t at = 12; q[at] != 0 && at < end; at += 1u + q[at]) {
		if (n + q[at] + 2 > size)
			return false;
		if (n > 0)
			name[n++] = '.';
		memcpy(name + n, q + at + 1, q[at]);
		n += q[at];
	}
	name[n] = '\0';
	return true;
}

/* The entry of known[] for the name of Q (ending at END), or -1. */
static int
known_index(const unsigned char *q, size_t end)
{
	char name[256];

	if (!qname_text(q, end, name, sizeof(name)))
		return -1;
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcasecmp(name, known[i].name) == 0)
			return (int)i;
	return -1;
}

size_t
eval_dns_reply(const unsigned char *q, size_t len, unsigned char *out)
{
	size_t end = qname_end(q, len);
	size_t at = end > 0 ? end + 4 : 12;
	int k = end > 0 ? known_index(q, end) : -1;
	bool a = end > 0 && q[end] == 0 && q[end + 1] == 1 && q[end + 2] == 0 &&
	    q[end + 3] == 1;
	unsigned char rr[16] = {0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4};

	memcpy(out, q, at);
	out[2] = (unsigned char)(0x80 | (q[2] & 0x79)); /* QR, opcode, RD */
	out[3] = k >= 0 ? 0x80 : 0x83; /* RA; NOERROR or NXDOMAIN */
	out[4] = 0;
	out[5] = end > 0 ? 1 : 0;
	memset(out + 6, 0, 6); /* answer, authority, additional */
	if (k < 0 || !a)
		return at;
	out[7] = 1;
	memcpy(rr + 12, known[k].a, 4);
	memcpy(out + at, rr, sizeof(rr));
	return at + sizeof(rr);
}

/* The value of the hex digit C, or -1. */
static int
hex_value(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
		return (c | 0x20) - 'a' + 10;
	return -1;
}

/* True when the N bytes at P are an even number of hex digits. */
static bool
all_hex(const unsigned char *p, size_t n)
{
	if (n == 0 || n % 2 != 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (hex_value(p[i]) < 0)
			return false;
	return true;
}

size_t
eval_dns_hex_payload(const unsigned char *q, size_t len, unsigned char *out,
    size_t size)
{
	size_t end = qname_end(q, len), n = 0;

	for (size_t at = 12; end > 0 && q[at] != 0; at += 1u + q[at]) {
		const unsigned char *p = q + at + 1;

		if (!all_hex(p, q[at]))
			break;
		for (size_t i = 0; i + 1 < q[at] && n < size; i += 2)
			out[n++] = (unsigned char)(hex_value(p[i]) << 4 |
			    hex_value(p[i + 1]));
	}
	return n;
}

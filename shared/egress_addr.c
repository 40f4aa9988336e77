/* egress_addr.c: addresses, CIDR ranges with ports and address classes
 * of controlled egress (egress_name.h). Pure. */
#include "egress_name.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

static const uint8_t v4mapped_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff,
    0xff};

/* An IPv4-mapped IPv6 address becomes the IPv4 address it maps. */
static void
unmap(struct egress_addr *a)
{
	if (a->family == AF_INET6 &&
	    memcmp(a->a, v4mapped_prefix, sizeof(v4mapped_prefix)) == 0) {
		memmove(a->a, a->a + 12, 4);
		memset(a->a + 4, 0, 12);
		a->family = AF_INET;
	}
}

int
egress_addr_from_sockaddr(const struct sockaddr *sa, struct egress_addr *out)
{
	memset(out, 0, sizeof(*out));
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)sa;

		out->family = AF_INET;
		memcpy(out->a, &in->sin_addr, 4);
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)sa;

		out->family = AF_INET6;
		memcpy(out->a, &in6->sin6_addr, 16);
		unmap(out);
		return 0;
	}
	return -EAFNOSUPPORT;
}

static size_t
addr_len(int family)
{
	return family == AF_INET ? 4 : 16;
}

bool
egress_addr_eq(const struct egress_addr *a, const struct egress_addr *b)
{
	struct egress_addr x = *a, y = *b;

	unmap(&x);
	unmap(&y);
	return x.family == y.family &&
	    (x.family == AF_INET || x.family == AF_INET6) &&
	    memcmp(x.a, y.a, addr_len(x.family)) == 0;
}

int
egress_addr_parse(const char *s, struct egress_addr *out)
{
	memset(out, 0, sizeof(*out));
	if (inet_pton(AF_INET, s, out->a) == 1) {
		out->family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, out->a) == 1) {
		out->family = AF_INET6;
		unmap(out);
		return 0;
	}
	memset(out, 0, sizeof(*out));
	return EGRESS_E_BAD_ADDRESS;
}

int
egress_addr_format(const struct egress_addr *a, char *out, size_t outlen)
{
	if (outlen > 0)
		out[0] = '\0';
	if ((a->family != AF_INET && a->family != AF_INET6) ||
	    inet_ntop(a->family, a->a, out, (socklen_t)outlen) == NULL)
		return -ENOSPC;
	return 0;
}

/* A decimal number S[0..LEN) without sign or leading zero, at most MAX,
 * into *OUT: true. */
static bool
decimal(const char *s, size_t len, unsigned max, unsigned *out)
{
	unsigned n = 0;

	if (len == 0 || len > 5 || (s[0] == '0' && len > 1))
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		n = n * 10 + (unsigned)(s[i] - '0');
	}
	if (n > max)
		return false;
	*out = n;
	return true;
}

int
egress_ports_parse(const char *s, size_t len, struct egress_ports *out)
{
	const char *dash = memchr(s, '-', len);
	unsigned lo, hi;

	out->lo = out->hi = 0;
	if (dash == NULL) {
		if (!decimal(s, len, 65535, &lo) || lo == 0)
			return EGRESS_E_BAD_PORT;
		hi = lo;
	} else if (!decimal(s, (size_t)(dash - s), 65535, &lo) || lo == 0 ||
	    !decimal(dash + 1, len - (size_t)(dash - s) - 1, 65535, &hi) ||
	    hi == 0) {
		return EGRESS_E_BAD_PORT;
	} else if (lo > hi) {
		return EGRESS_E_PORT_RANGE;
	}
	out->lo = (uint16_t)lo;
	out->hi = (uint16_t)hi;
	return 0;
}

/* Whether the bits of A past the first BITS are all zero. */
static bool
host_bits_clear(const struct egress_addr *a, unsigned bits)
{
	size_t n = addr_len(a->family);

	for (size_t i = bits / 8; i < n; i++) {
		unsigned keep = 0;

		if (i == bits / 8 && bits % 8 != 0)
			keep = (0xffu << (8 - bits % 8)) & 0xffu;

		if (a->a[i] & (uint8_t)~keep)
			return false;
	}
	return true;
}

/* Splits S into the address text (copied into ADDR, ADDRLEN bytes) and
 * the rest after it ("/BITS:PORTS" or ":PORTS"), *REST. */
static int
split_address(const char *s, char *addr, size_t addrlen, const char **rest)
{
	const char *end;
	size_t n;

	if (s[0] == '[') {
		end = strchr(s, ']');
		if (end == NULL)
			return EGRESS_E_BAD_ADDRESS;
		n = (size_t)(end - s - 1);
		s++;
		*rest = end + 1;
	} else {
		n = strcspn(s, "/:");
		/* An IPv6 address is bracketed: its colons would be read as
		 * the port's. */
		end = s + n;
		*rest = end;
	}
	if (n == 0 || n >= addrlen)
		return EGRESS_E_BAD_ADDRESS;
	memcpy(addr, s, n);
	addr[n] = '\0';
	return 0;
}

int
egress_cidr_parse(const char *s, struct egress_cidr *cidr,
    struct egress_ports *ports)
{
	char addr[INET6_ADDRSTRLEN + 1];
	const char *rest, *colon;
	unsigned bits, max;
	int r;

	memset(cidr, 0, sizeof(*cidr));
	memset(ports, 0, sizeof(*ports));
	r = split_address(s, addr, sizeof(addr), &rest);
	if (r < 0)
		return r;
	if (inet_pton(AF_INET, addr, cidr->addr.a) == 1 && s[0] != '[') {
		cidr->addr.family = AF_INET;
	} else if (inet_pton(AF_INET6, addr, cidr->addr.a) == 1 &&
	    s[0] == '[') {
		cidr->addr.family = AF_INET6;
	} else {
		memset(cidr, 0, sizeof(*cidr));
		return EGRESS_E_BAD_ADDRESS;
	}
	max = cidr->addr.family == AF_INET ? 32 : 128;
	colon = strchr(rest, ':');
	if (colon == NULL)
		return EGRESS_E_NO_PORT;
	bits = max;
	if (rest[0] == '/' &&
	    !decimal(rest + 1, (size_t)(colon - rest - 1), max, &bits))
		return EGRESS_E_BAD_PREFIX;
	if (rest[0] != '/' && rest != colon)
		return EGRESS_E_BAD_ADDRESS;
	if (!host_bits_clear(&cidr->addr, bits))
		return EGRESS_E_HOST_BITS;
	r = egress_ports_parse(colon + 1, strlen(colon + 1), ports);
	if (r < 0)
		return r;
	cidr->bits = bits;
	/* ::ffff:a.b.c.d/N is the IPv4 range a.b.c.d/(N - 96): the kernel
	 * connects to the IPv4 address. */
	if (cidr->addr.family == AF_INET6 && bits >= 96 &&
	    memcmp(cidr->addr.a, v4mapped_prefix, 12) == 0) {
		unmap(&cidr->addr);
		cidr->bits = bits - 96;
	}
	return 0;
}

int
egress_cidr_format(const struct egress_cidr *cidr,
    const struct egress_ports *ports, char *out, size_t outlen)
{
	char addr[INET6_ADDRSTRLEN], bits[16] = "", port[16];
	unsigned max = cidr->addr.family == AF_INET ? 32 : 128;
	int n;

	if (egress_addr_format(&cidr->addr, addr, sizeof(addr)) < 0)
		return -ENOSPC;
	if (cidr->bits != max)
		snprintf(bits, sizeof(bits), "/%u", cidr->bits);
	if (ports->lo == ports->hi)
		snprintf(port, sizeof(port), "%u", (unsigned)ports->lo);
	else
		snprintf(port, sizeof(port), "%u-%u", (unsigned)ports->lo,
		    (unsigned)ports->hi);
	if (cidr->addr.family == AF_INET)
		n = snprintf(out, outlen, "%s%s:%s", addr, bits, port);
	else
		n = snprintf(out, outlen, "[%s]%s:%s", addr, bits, port);
	if (n < 0 || (size_t)n >= outlen) {
		if (outlen > 0)
			out[0] = '\0';
		return -ENOSPC;
	}
	return 0;
}

/* Whether the first BITS bits of A and B (the same family) are equal. */
static bool
prefix_eq(const uint8_t *a, const uint8_t *b, unsigned bits)
{
	size_t whole = bits / 8;
	uint8_t mask;

	if (memcmp(a, b, whole) != 0)
		return false;
	if (bits % 8 == 0)
		return true;
	mask = (uint8_t)(0xff << (8 - bits % 8));
	return ((a[whole] ^ b[whole]) & mask) == 0;
}

bool
egress_cidr_contains(const struct egress_cidr *cidr,
    const struct egress_addr *a)
{
	struct egress_addr x = *a;

	unmap(&x);
	return x.family == cidr->addr.family &&
	    (x.family == AF_INET || x.family == AF_INET6) &&
	    cidr->bits <= addr_len(x.family) * 8 &&
	    prefix_eq(cidr->addr.a, x.a, cidr->bits);
}

bool
egress_cidr_covers(const struct egress_cidr *outer,
    const struct egress_cidr *inner)
{
	return outer->bits <= inner->bits &&
	    egress_cidr_contains(outer, &inner->addr);
}

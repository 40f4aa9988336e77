/* egress_class.c: the classes of addresses no name may reach, and the
 * host's own addresses (egress_name.h). Pure. */
#include "egress_name.h"

#include <netinet/in.h>
#include <string.h>

static const char *const class_names[] = {
    [EGRESS_ADDR_PUBLIC] = "public",
    [EGRESS_ADDR_LOOPBACK] = "loopback",
    [EGRESS_ADDR_RFC1918] = "rfc1918",
    [EGRESS_ADDR_LINK_LOCAL] = "link_local",
    [EGRESS_ADDR_CGNAT] = "cgnat",
    [EGRESS_ADDR_ULA] = "ula",
    [EGRESS_ADDR_SITE_LOCAL] = "site_local",
    [EGRESS_ADDR_MULTICAST] = "multicast",
    [EGRESS_ADDR_UNSPECIFIED] = "unspecified",
    [EGRESS_ADDR_BROADCAST] = "broadcast",
    [EGRESS_ADDR_DOCUMENTATION] = "documentation",
    [EGRESS_ADDR_RESERVED] = "reserved",
    [EGRESS_ADDR_6TO4] = "6to4",
    [EGRESS_ADDR_TEREDO] = "teredo",
};

const char *
egress_addr_class_name(enum egress_addr_class c)
{
	if ((unsigned)c > EGRESS_ADDR_CLASS_LAST)
		return "unknown";
	return class_names[c];
}

bool
egress_addr_class_private(enum egress_addr_class c)
{
	return c != EGRESS_ADDR_PUBLIC && c != EGRESS_ADDR_DOCUMENTATION;
}

/* One range of a table: the first BITS bits of PREFIX. */
struct range {
	uint8_t prefix[16];
	unsigned bits;
	enum egress_addr_class cls;
};

/* IPv4 special-purpose ranges (RFC 6890 and the RFCs egress_name.h
 * names), the first match wins: 169.254.169.254 is link-local. */
static const struct range v4_ranges[] = {
    {{0}, 8, EGRESS_ADDR_UNSPECIFIED},
    {{10}, 8, EGRESS_ADDR_RFC1918},
    {{100, 64}, 10, EGRESS_ADDR_CGNAT},
    {{127}, 8, EGRESS_ADDR_LOOPBACK},
    {{169, 254}, 16, EGRESS_ADDR_LINK_LOCAL},
    {{172, 16}, 12, EGRESS_ADDR_RFC1918},
    {{192, 0, 0}, 24, EGRESS_ADDR_RESERVED},
    {{192, 0, 2}, 24, EGRESS_ADDR_DOCUMENTATION},
    {{192, 88, 99}, 24, EGRESS_ADDR_RESERVED},
    {{192, 168}, 16, EGRESS_ADDR_RFC1918},
    {{198, 18}, 15, EGRESS_ADDR_RESERVED},
    {{198, 51, 100}, 24, EGRESS_ADDR_DOCUMENTATION},
    {{203, 0, 113}, 24, EGRESS_ADDR_DOCUMENTATION},
    {{224}, 4, EGRESS_ADDR_MULTICAST},
    {{255, 255, 255, 255}, 32, EGRESS_ADDR_BROADCAST},
    {{240}, 4, EGRESS_ADDR_RESERVED},
};

/* IPv6 ranges, the first match wins; ::ffff:0:0/96 and 64:ff9b::/96 are
 * read as IPv4 before these. */
static const struct range v6_ranges[] = {
    {{0}, 128, EGRESS_ADDR_UNSPECIFIED},
    {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 128,
	EGRESS_ADDR_LOOPBACK},
    {{0}, 96, EGRESS_ADDR_RESERVED},
    {{0x00, 0x64, 0xff, 0x9b, 0x00, 0x01}, 48, EGRESS_ADDR_RESERVED},
    {{0x01, 0x00}, 64, EGRESS_ADDR_RESERVED},
    {{0x20, 0x01, 0x00, 0x00}, 32, EGRESS_ADDR_TEREDO},
    {{0x20, 0x01, 0x0d, 0xb8}, 32, EGRESS_ADDR_DOCUMENTATION},
    {{0x20, 0x01}, 23, EGRESS_ADDR_RESERVED},
    {{0x20, 0x02}, 16, EGRESS_ADDR_6TO4},
    {{0xfc}, 7, EGRESS_ADDR_ULA},
    {{0xfe, 0x80}, 10, EGRESS_ADDR_LINK_LOCAL},
    {{0xfe, 0xc0}, 10, EGRESS_ADDR_SITE_LOCAL},
    {{0xff}, 8, EGRESS_ADDR_MULTICAST},
};

/* Whether the first BITS bits of A equal those of PREFIX. */
static bool
in_range(const uint8_t *a, const uint8_t *prefix, unsigned bits)
{
	size_t whole = bits / 8;
	uint8_t mask;

	if (memcmp(a, prefix, whole) != 0)
		return false;
	if (bits % 8 == 0)
		return true;
	mask = (uint8_t)(0xff << (8 - bits % 8));
	return ((a[whole] ^ prefix[whole]) & mask) == 0;
}

static enum egress_addr_class
lookup(const uint8_t *a, const struct range *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (in_range(a, t[i].prefix, t[i].bits))
			return t[i].cls;
	return EGRESS_ADDR_PUBLIC;
}

enum egress_addr_class
egress_addr_classify(const struct egress_addr *a)
{
	/* The IPv4 address inside ::ffff:0:0/96 (RFC 4291 2.5.5.2), which
	 * the kernel dials, and inside the NAT64 well-known prefix
	 * 64:ff9b::/96 (RFC 6052 2.1), which a NAT64 gateway dials. */
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff,
	    0xff};
	static const uint8_t nat64[12] = {0x00, 0x64, 0xff, 0x9b};

	if (a->family == AF_INET)
		return lookup(a->a, v4_ranges,
		    sizeof(v4_ranges) / sizeof(v4_ranges[0]));
	if (a->family != AF_INET6)
		return EGRESS_ADDR_RESERVED;
	if (memcmp(a->a, mapped, 12) == 0 || memcmp(a->a, nat64, 12) == 0)
		return lookup(a->a + 12, v4_ranges,
		    sizeof(v4_ranges) / sizeof(v4_ranges[0]));
	return lookup(a->a, v6_ranges,
	    sizeof(v6_ranges) / sizeof(v6_ranges[0]));
}

enum egress_addr_class
egress_addr_class(const struct sockaddr *sa)
{
	struct egress_addr a;

	if (egress_addr_from_sockaddr(sa, &a) < 0)
		return EGRESS_ADDR_RESERVED;
	return egress_addr_classify(&a);
}

bool
egress_addr_is_local(const struct sockaddr *sa,
    const struct egress_addrs *local)
{
	struct egress_addr a;

	if (local == NULL || egress_addr_from_sockaddr(sa, &a) < 0)
		return false;
	for (size_t i = 0; i < local->n; i++)
		if (egress_addr_eq(&a, &local->v[i]))
			return true;
	return false;
}

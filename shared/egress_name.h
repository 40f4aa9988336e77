/*
 * egress_name.h: host names and addresses of controlled egress (issue 25):
 * one canonical form of a host, CIDR ranges with ports, and the classes
 * of addresses no name may reach unless the policy names them. Pure:
 * libc only, no allocation, no system call but in egress_local_addrs
 * (egress_ifaddrs.c). The rules and the decision are egress_rules.h.
 *
 * Every function that can refuse its input returns a negative code: one
 * of EGRESS_E_* below (each with a stable token and a sentence,
 * egress_name_errname and egress_name_strerror), or -ENOSPC when an
 * output buffer is too small. The EGRESS_E_* codes lie outside the
 * errno values Linux uses (at most 133), so a caller can tell them apart.
 */
#ifndef STOCKADE_EGRESS_NAME_H
#define STOCKADE_EGRESS_NAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Longest host name in text, without a trailing dot: 255 octets on the
 * wire (RFC 1035 section 2.3.4) less the length octet of the first label
 * and the root's zero octet. */
#define EGRESS_NAME_MAX 253
/* Longest label (RFC 1035 section 2.3.4). */
#define EGRESS_LABEL_MAX 63
/* A buffer that holds any canonical host (a name, or an address in
 * text, INET6_ADDRSTRLEN = 46 bytes) with its NUL. */
#define EGRESS_HOST_BUF (EGRESS_NAME_MAX + 1)

/* What egress_host_canon found (its positive return values). */
enum egress_host_kind {
	EGRESS_HOST_NAME = 1, /* a DNS name, canonical */
	EGRESS_HOST_IPV4 = 2, /* an IPv4 dotted quad */
	EGRESS_HOST_IPV6 = 3, /* an IPv6 address, bracketed or not */
};

/*
 * The refusals, as X(NAME, NUMBER, TOKEN, SENTENCE): the code is
 * -(1000 + NUMBER); TOKEN is stable (reports, tests); SENTENCE follows
 * "host NAME " or "entry ENTRY " in a message. Numbers are never reused.
 */
#define EGRESS_NAME_ERRORS(X)                                                  \
	X(EGRESS_E_EMPTY, 1, "empty", "is empty")                              \
	X(EGRESS_E_NUL, 2, "nul", "contains a NUL byte")                       \
	X(EGRESS_E_CRLF, 3, "crlf", "contains a carriage return or line feed") \
	X(EGRESS_E_CONTROL, 4, "control", "contains a control character")      \
	X(EGRESS_E_SPACE, 5, "space", "contains a space")                      \
	X(EGRESS_E_NON_ASCII, 6, "non_ascii",                                  \
	    "contains a byte outside ASCII (write an international name as "   \
	    "punycode, xn--)")                                                 \
	X(EGRESS_E_USERINFO, 7, "userinfo", "contains \"@\" (userinfo)")       \
	X(EGRESS_E_PERCENT, 8, "percent",                                      \
	    "contains \"%\" (percent-encoding or an IPv6 zone)")               \
	X(EGRESS_E_SLASH, 9, "slash", "contains \"/\" or a backslash")         \
	X(EGRESS_E_BAD_CHAR, 10, "bad_char",                                   \
	    "contains a character other than letters, digits, \"-\" and "      \
	    "\".\"")                                                           \
	X(EGRESS_E_EMPTY_LABEL, 11, "empty_label", "has an empty label")       \
	X(EGRESS_E_LABEL_TOO_LONG, 12, "label_too_long",                       \
	    "has a label longer than 63 bytes")                                \
	X(EGRESS_E_NAME_TOO_LONG, 13, "name_too_long",                         \
	    "is longer than 253 bytes")                                        \
	X(EGRESS_E_HYPHEN, 14, "hyphen",                                       \
	    "has a label that starts or ends with \"-\"")                      \
	X(EGRESS_E_BAD_ALABEL, 15, "bad_alabel",                               \
	    "has an \"xn--\" label with nothing after the prefix")             \
	X(EGRESS_E_ODD_IPV4, 16, "odd_ipv4",                                   \
	    "ends in a number but is no dotted quad (an IPv4 address is "      \
	    "written a.b.c.d, decimal, no leading zero)")                      \
	X(EGRESS_E_BAD_IPV6, 17, "bad_ipv6", "is not a valid IPv6 address")    \
	X(EGRESS_E_BAD_PORT, 18, "bad_port",                                   \
	    "has a port that is not a decimal number from 1 to 65535")         \
	X(EGRESS_E_PORT_RANGE, 19, "port_range",                               \
	    "has a port range whose first port is above its last")             \
	X(EGRESS_E_NO_PORT, 20, "no_port",                                     \
	    "has no port (ADDRESS[/BITS]:PORT[-PORT])")                        \
	X(EGRESS_E_BAD_ADDRESS, 21, "bad_address",                             \
	    "is not an IPv4 dotted quad or a bracketed IPv6 address")          \
	X(EGRESS_E_BAD_PREFIX, 22, "bad_prefix",                               \
	    "has a prefix length that is not a decimal number within the "     \
	    "address's bits")                                                  \
	X(EGRESS_E_HOST_BITS, 23, "host_bits",                                 \
	    "has address bits set beyond its prefix length")                   \
	X(EGRESS_E_ADDRESS, 24, "address",                                     \
	    "is an address, not a name (addresses are allow_address's)")       \
	X(EGRESS_E_BAD_WILDCARD, 25, "bad_wildcard",                           \
	    "has \"*\" other than as \"*.\" before a name of two labels or "   \
	    "more")

#define EGRESS_X_ENUM(name, n, token, sentence) name = -(1000 + (n)),
enum egress_name_error { EGRESS_NAME_ERRORS(EGRESS_X_ENUM) };
#undef EGRESS_X_ENUM

/*
 * The stable token of CODE (an EGRESS_E_* code: "nul", "userinfo", ...;
 * a negative errno: "errno"; anything else: "unknown"). A static string.
 */
const char *egress_name_errname(int code);

/*
 * A sentence for CODE, to follow the thing refused ("host X contains a
 * NUL byte"): EGRESS_E_* codes from the table above, strerror(3)'s text
 * for a negative errno. A static string, stable for EGRESS_E_* codes.
 */
const char *egress_name_strerror(int code);

/*
 * The canonical form of the host IN[0..LEN) (not NUL-terminated: a NUL
 * inside is seen and refused), as the proxy compares it with the rules:
 *  - refused first, at the first such byte: NUL, CR or LF, another
 *    control character, space, a byte >= 0x80 (an IDN must already be
 *    A-labels, "xn--", RFC 5890 section 2.3.2.1 and RFC 5891 section
 *    4.4), "@" (userinfo), "%" (percent-encoding, IPv6 zones), "/" and
 *    backslash;
 *  - "[ADDR]" or a text with ":" is an IPv6 address (inet_pton(3),
 *    RFC 4291 section 2.2), written back by inet_ntop(3) (RFC 5952);
 *  - otherwise lower case ASCII with one trailing dot removed. When its
 *    last label is a number (all digits, or "0x" and hex digits: the
 *    WHATWG URL standard's "ends in a number" test), it is an IPv4
 *    address and must be a dotted quad as inet_pton(3) reads it (four
 *    decimal parts, no leading zero); "127.1", "2130706433",
 *    "0x7f.1", "0177.0.0.1", which inet_aton(3) and so resolvers would
 *    take for 127.0.0.1, are refused (EGRESS_E_ODD_IPV4);
 *  - a name: labels of 1 to 63 bytes of [a-z0-9-], none starting or
 *    ending with "-", the whole at most 253 bytes (RFC 1035 section
 *    2.3.4, RFC 1123 section 2.1); "_" is refused (docs/decisions.md);
 *    an "xn--" label must have something after its prefix (its
 *    punycode is not decoded: names are compared as ASCII, so an
 *    A-label that does not decode only fails to resolve).
 * Writes the canonical text with its NUL to OUT (OUTLEN bytes;
 * EGRESS_HOST_BUF always suffices). Returns EGRESS_HOST_NAME,
 * EGRESS_HOST_IPV4 or EGRESS_HOST_IPV6; or an EGRESS_E_* code, or
 * -ENOSPC when OUT is too small, with OUT "" (when OUTLEN > 0).
 */
int egress_host_canon(const char *in, size_t len, char *out, size_t outlen);

/*
 * The first byte of IN[0..LEN) that no host may hold, whatever else the
 * text is (a host, a rule with a port, a request line's authority): NUL,
 * CR or LF, another control character, space, a byte >= 0x80, "@", "%",
 * "/" or backslash, as its EGRESS_E_* code (the order of
 * egress_host_canon's first step); 0 when there is none.
 */
int egress_host_hostile(const char *in, size_t len);

/* ---- Addresses ---------------------------------------------------------- */

/*
 * An address: FAMILY AF_INET (the first 4 bytes of A used) or AF_INET6
 * (16 bytes), network byte order. Plain data, compared with
 * egress_addr_eq.
 */
struct egress_addr {
	int family;
	uint8_t a[16];
};

/* A range of addresses: ADDR with the first BITS bits significant (0 to
 * 32 or 128), the others zero. */
struct egress_cidr {
	struct egress_addr addr;
	unsigned bits;
};

/* A set of ports, LO to HI inclusive, 1 <= LO <= HI <= 65535. */
struct egress_ports {
	uint16_t lo, hi;
};

/*
 * Reads the sockaddr SA (AF_INET or AF_INET6; SA must be that family's
 * whole struct) into OUT, an IPv4-mapped IPv6 address (::ffff:0:0/96,
 * RFC 4291 section 2.5.5.2) as the IPv4 address it is: the kernel
 * connects to that very address. Returns 0, or -EAFNOSUPPORT for
 * another family (OUT zeroed).
 */
int egress_addr_from_sockaddr(const struct sockaddr *sa,
    struct egress_addr *out);

/* Whether A and B are the same address (IPv4-mapped ones compared as the
 * IPv4 address, as egress_addr_from_sockaddr reads them). */
bool egress_addr_eq(const struct egress_addr *a, const struct egress_addr *b);

/*
 * Parses "A.B.C.D" or an IPv6 address (not bracketed) with inet_pton(3)
 * into OUT, an IPv4-mapped IPv6 address as IPv4. Returns 0, or
 * EGRESS_E_BAD_ADDRESS. S is NUL-terminated.
 */
int egress_addr_parse(const char *s, struct egress_addr *out);

/* Writes A as inet_ntop(3) does into OUT (OUTLEN bytes; 46 suffice).
 * Returns 0, or -ENOSPC. */
int egress_addr_format(const struct egress_addr *a, char *out, size_t outlen);

/*
 * Parses a port "P" or a range "LO-HI" (decimal, no sign, no leading
 * zero, 1 to 65535, LO <= HI) from S[0..LEN) into OUT. Returns 0,
 * EGRESS_E_BAD_PORT or EGRESS_E_PORT_RANGE.
 */
int egress_ports_parse(const char *s, size_t len, struct egress_ports *out);

/*
 * Parses an allow_address entry, S (NUL-terminated):
 *   IPV4[/BITS]:PORTS      e.g. 127.0.0.1:8080, 10.0.0.0/8:443
 *   [IPV6][/BITS]:PORTS    e.g. [::1]:8080, [fd00::]/8:8000-8100
 * BITS defaults to the whole address (32, 128); PORTS is a port or a
 * range (egress_ports_parse), and is required: an entry opens addresses
 * no name may reach, and names the service it opens them for
 * (docs/decisions.md). The address must have no bit set beyond BITS
 * (10.1.0.0/8 is refused rather than read as 10.0.0.0/8). An IPv4-mapped
 * IPv6 address is read as IPv4, BITS less 96. Returns 0, or an
 * EGRESS_E_* code (BAD_ADDRESS, BAD_PREFIX, HOST_BITS, NO_PORT,
 * BAD_PORT, PORT_RANGE).
 */
int egress_cidr_parse(const char *s, struct egress_cidr *cidr,
    struct egress_ports *ports);

/*
 * Writes CIDR and PORTS in egress_cidr_parse's syntax, canonical ("/32"
 * and "/128" left out, IPv6 bracketed, a range of one port as that
 * port), into OUT (OUTLEN bytes; 64 suffice). Returns 0, or -ENOSPC.
 */
int egress_cidr_format(const struct egress_cidr *cidr,
    const struct egress_ports *ports, char *out, size_t outlen);

/* Whether CIDR contains A (the same family, the first bits equal). */
bool egress_cidr_contains(const struct egress_cidr *cidr,
    const struct egress_addr *a);

/* Whether INNER's addresses are all in OUTER's. */
bool egress_cidr_covers(const struct egress_cidr *outer,
    const struct egress_cidr *inner);

/*
 * The classes of addresses (reports name them by egress_addr_class_name).
 * Every class but EGRESS_ADDR_PUBLIC is private: a name may not reach it
 * unless an allow_address covers it (egress_rules.h). The sources are
 * the IANA special-purpose address registries (RFC 6890) and:
 */
enum egress_addr_class {
	EGRESS_ADDR_PUBLIC = 0, /* none of the below */
	EGRESS_ADDR_LOOPBACK, /* 127/8 (RFC 1122 3.2.1.3), ::1 */
	EGRESS_ADDR_RFC1918, /* 10/8, 172.16/12, 192.168/16 (RFC 1918) */
	EGRESS_ADDR_LINK_LOCAL, /* 169.254/16 (RFC 3927), the cloud
				 * metadata service 169.254.169.254 among
				 * them; fe80::/10 (RFC 4291 2.5.6) */
	EGRESS_ADDR_CGNAT, /* 100.64/10 (RFC 6598) */
	EGRESS_ADDR_ULA, /* fc00::/7 (RFC 4193) */
	EGRESS_ADDR_SITE_LOCAL, /* fec0::/10 (deprecated, RFC 3879) */
	EGRESS_ADDR_MULTICAST, /* 224/4 (RFC 5771), ff00::/8 */
	EGRESS_ADDR_UNSPECIFIED, /* 0/8 (RFC 1122 3.2.1.3: "this network";
				  * Linux connects 0.0.0.0 to the host
				  * itself), :: */
	EGRESS_ADDR_BROADCAST, /* 255.255.255.255 (RFC 919) */
	EGRESS_ADDR_DOCUMENTATION, /* 192.0.2/24, 198.51.100/24,
				    * 203.0.113/24 (RFC 5737),
				    * 2001:db8::/32 (RFC 3849) */
	EGRESS_ADDR_RESERVED, /* other special-purpose ranges of RFC 6890:
			       * 192.0.0/24, 192.88.99/24 (RFC 7526),
			       * 198.18/15 (RFC 2544), 240/4, ::/96 but
			       * :: and ::1 (IPv4-compatible, RFC 4291
			       * 2.5.5.1), 100::/64 (RFC 6666),
			       * 64:ff9b:1::/48 (RFC 8215),
			       * 2001::/23 but Teredo (RFC 2928) */
	EGRESS_ADDR_6TO4, /* 2002::/16 (RFC 3056, deprecated by RFC 7526) */
	EGRESS_ADDR_TEREDO, /* 2001::/32 (RFC 4380) */
};
#define EGRESS_ADDR_CLASS_LAST EGRESS_ADDR_TEREDO

/*
 * The class of A. An IPv4-mapped IPv6 address (::ffff:0:0/96, RFC 4291
 * section 2.5.5.2) and a NAT64 well-known-prefix address (64:ff9b::/96,
 * RFC 6052 section 2.1) have the class of the IPv4 address inside them:
 * ::ffff:127.0.0.1 is loopback, 64:ff9b::a9fe:a9fe link-local. 6to4 and
 * Teredo addresses are classes of their own (tunnels to an IPv4 address
 * they carry; no registry is reached through one). A family other than
 * AF_INET and AF_INET6 is EGRESS_ADDR_RESERVED.
 */
enum egress_addr_class egress_addr_classify(const struct egress_addr *a);

/* egress_addr_classify of the sockaddr SA (AF_INET or AF_INET6, SA that
 * family's whole struct); another family is EGRESS_ADDR_RESERVED. */
enum egress_addr_class egress_addr_class(const struct sockaddr *sa);

/* The report name of C ("public", "loopback", "rfc1918", "link_local",
 * "cgnat", "ula", "site_local", "multicast", "unspecified", "broadcast",
 * "documentation", "reserved", "6to4", "teredo"); a static string,
 * "unknown" for a value out of the enum. */
const char *egress_addr_class_name(enum egress_addr_class c);

/* Whether C is a class no name may reach unless an allow_address covers
 * it: every class but EGRESS_ADDR_PUBLIC and EGRESS_ADDR_DOCUMENTATION.
 * The documentation ranges (RFC 5737, RFC 3849) route nowhere on the
 * Internet, so a name that resolves into one reaches only what the
 * host's own network answers there: an egress gateway that answers
 * every name with one address of 203.0.113/24 (these machines' own) is
 * such a network. docs/decisions.md, "Documentation addresses are not
 * private". */
bool egress_addr_class_private(enum egress_addr_class c);

/* ---- The host's own addresses ------------------------------------------ */

/* A list of addresses, V[0..N), owned by whoever filled it. */
struct egress_addrs {
	struct egress_addr *v;
	size_t n;
};

/*
 * Whether SA (AF_INET or AF_INET6) is one of LOCAL's addresses, the
 * host's own (egress_local_addrs): a name that resolves to one of them
 * reaches a service of the host, whatever its class. IPv4-mapped
 * addresses compare as IPv4. LOCAL may be NULL (no address). Pure.
 */
bool egress_addr_is_local(const struct sockaddr *sa,
    const struct egress_addrs *local);

/*
 * Fills OUT with the addresses of every interface of this host's
 * network namespace, as getifaddrs(3) lists them (AF_INET and AF_INET6
 * only; an address listed twice kept once). OUT is malloc'd: free
 * OUT->v (egress_addrs_clear). Returns 0, or a negative errno from
 * getifaddrs(3) or -ENOMEM, with OUT empty. Not pure: egress_ifaddrs.c.
 */
int egress_local_addrs(struct egress_addrs *out);

/* Frees OUT's list and empties it; accepts NULL. */
void egress_addrs_clear(struct egress_addrs *out);

#endif

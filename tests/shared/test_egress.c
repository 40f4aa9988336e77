/*
 * test_egress.c: host names, addresses, CIDR ranges and address classes
 * of controlled egress (shared/egress_name.c, egress_addr.c,
 * egress_class.c, egress_ifaddrs.c; issue 25).
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <string.h>

#include "egress_name.h"

/* egress_host_canon of the C string IN; *OUT the canonical text. */
static int
canon(const char *in, char *out)
{
	return egress_host_canon(in, strlen(in), out, EGRESS_HOST_BUF);
}

static void
expect_name(const char *in, const char *want)
{
	char out[EGRESS_HOST_BUF];
	int r = canon(in, out);

	cr_assert_eq(r, EGRESS_HOST_NAME, "%s: %d (%s)", in, r,
	    egress_name_errname(r));
	cr_assert_str_eq(out, want, "%s", in);
}

static void
expect_refused(const char *in, size_t len, int code)
{
	char out[EGRESS_HOST_BUF];
	int r = egress_host_canon(in, len, out, sizeof(out));

	cr_assert_eq(r, code, "\"%.*s\": %d (%s), want %s", (int)len, in, r,
	    egress_name_errname(r), egress_name_errname(code));
	cr_assert_str_eq(out, "", "a refusal leaves OUT empty");
}

static void
expect_bad(const char *in, int code)
{
	expect_refused(in, strlen(in), code);
}

/* ---- Canonical form ----------------------------------------------------- */

Test(canon, lower_case_and_one_trailing_dot)
{
	expect_name("Example.ORG", "example.org");
	expect_name("example.org.", "example.org");
	expect_name("EXAMPLE.org.", "example.org");
	expect_name("localhost", "localhost");
	expect_name("a-b.c0.d", "a-b.c0.d");
	/* A digit may start a label (RFC 1123 2.1), and a label may look
	 * like hex if the last one is no number. */
	expect_name("0x7f.example.org", "0x7f.example.org");
	expect_name("123.example.org", "123.example.org");
	expect_bad("example.org..", EGRESS_E_EMPTY_LABEL);
	expect_bad(".", EGRESS_E_EMPTY);
	expect_bad("", EGRESS_E_EMPTY);
}

Test(canon, punycode_is_kept_and_non_ascii_refused)
{
	expect_name("XN--Bcher-kva.example", "xn--bcher-kva.example");
	/* "bücher.example" in UTF-8: IDN must come as A-labels. */
	expect_bad("b\xc3\xbc"
		   "cher.example",
	    EGRESS_E_NON_ASCII);
	expect_bad("xn--.example", EGRESS_E_BAD_ALABEL);
	expect_bad("caf\xe9.example", EGRESS_E_NON_ASCII);
}

/* The SOCKS5 host-name bypass: a NUL ends the name for one parser and
 * not for another. */
Test(canon, nul_inside_is_refused)
{
	expect_refused("evil.example\0.allowed.example", 29, EGRESS_E_NUL);
	expect_refused("allowed.example\0", 16, EGRESS_E_NUL);
	expect_refused("\0", 1, EGRESS_E_NUL);
}

Test(canon, cr_lf_space_and_controls_are_refused)
{
	expect_bad("allowed.example\r\nHost: evil.example", EGRESS_E_CRLF);
	expect_bad("allowed.example\n", EGRESS_E_CRLF);
	expect_bad("allowed.example\r", EGRESS_E_CRLF);
	expect_bad("allowed .example", EGRESS_E_SPACE);
	expect_bad(" allowed.example", EGRESS_E_SPACE);
	expect_bad("allowed.example\t", EGRESS_E_CONTROL);
	expect_bad("allowed\x7f.example", EGRESS_E_CONTROL);
	expect_bad("allowed\x1b.example", EGRESS_E_CONTROL);
}

Test(canon, userinfo_percent_and_slashes_are_refused)
{
	expect_bad("allowed.example@evil.example", EGRESS_E_USERINFO);
	expect_bad("user:pass@allowed.example", EGRESS_E_USERINFO);
	expect_bad("allowed%2eexample", EGRESS_E_PERCENT);
	expect_bad("evil.example%00.allowed.example", EGRESS_E_PERCENT);
	expect_bad("[fe80::1%eth0]", EGRESS_E_PERCENT);
	expect_bad("allowed.example/path", EGRESS_E_SLASH);
	expect_bad("allowed.example\\evil", EGRESS_E_SLASH);
}

Test(canon, characters_outside_ldh_are_refused)
{
	expect_bad("under_score.example", EGRESS_E_BAD_CHAR);
	expect_bad("star*.example", EGRESS_E_BAD_CHAR);
	expect_bad("*.example.org", EGRESS_E_BAD_CHAR);
	expect_bad("a!b.example", EGRESS_E_BAD_CHAR);
	expect_bad("-lead.example", EGRESS_E_HYPHEN);
	expect_bad("trail-.example", EGRESS_E_HYPHEN);
	expect_bad("a..b", EGRESS_E_EMPTY_LABEL);
	expect_bad(".a.b", EGRESS_E_EMPTY_LABEL);
	/* A port is not part of a host. */
	expect_bad("allowed.example:443", EGRESS_E_BAD_IPV6);
}

Test(canon, label_and_name_lengths)
{
	char name[300], out[EGRESS_HOST_BUF];
	size_t i;

	/* 63 bytes: the longest label (RFC 1035 2.3.4). */
	memset(name, 'a', 63);
	strcpy(name + 63, ".example");
	cr_assert_eq(canon(name, out), EGRESS_HOST_NAME);
	memset(name, 'a', 64);
	strcpy(name + 64, ".example");
	expect_bad(name, EGRESS_E_LABEL_TOO_LONG);

	/* 253 bytes in labels of 9 and a dot: the longest name. */
	for (i = 0; i < 253; i++)
		name[i] = (i % 10 == 9) ? '.' : 'b';
	name[253] = '\0';
	cr_assert_eq(canon(name, out), EGRESS_HOST_NAME, "%s", name);
	cr_assert_eq(strlen(out), 253);
	/* With its trailing dot it is the same name. */
	strcpy(name + 253, ".");
	cr_assert_eq(canon(name, out), EGRESS_HOST_NAME);
	name[253] = 'b';
	name[254] = '\0';
	expect_bad(name, EGRESS_E_NAME_TOO_LONG);
	/* A longer buffer than the name is refused before it is read. */
	memset(name, 'c', 299);
	name[299] = '\0';
	expect_bad(name, EGRESS_E_NAME_TOO_LONG);
}

Test(canon, small_output_is_enospc)
{
	char out[8];

	cr_assert_eq(egress_host_canon("example.org", 11, out, sizeof(out)),
	    -ENOSPC);
	cr_assert_str_eq(out, "");
	cr_assert_eq(egress_host_canon("127.0.0.1", 9, out, sizeof(out)),
	    -ENOSPC);
}

/* ---- Address literals --------------------------------------------------- */

Test(canon, ip_literals_are_addresses)
{
	char out[EGRESS_HOST_BUF];

	cr_assert_eq(canon("127.0.0.1", out), EGRESS_HOST_IPV4);
	cr_assert_str_eq(out, "127.0.0.1");
	cr_assert_eq(canon("169.254.169.254.", out), EGRESS_HOST_IPV4);
	cr_assert_str_eq(out, "169.254.169.254");
	cr_assert_eq(canon("[::1]", out), EGRESS_HOST_IPV6);
	cr_assert_str_eq(out, "::1");
	cr_assert_eq(canon("::1", out), EGRESS_HOST_IPV6);
	cr_assert_eq(canon("[2001:DB8:0:0::1]", out), EGRESS_HOST_IPV6);
	cr_assert_str_eq(out, "2001:db8::1");
	cr_assert_eq(canon("[::ffff:127.0.0.1]", out), EGRESS_HOST_IPV6);
	cr_assert_str_eq(out, "::ffff:127.0.0.1");
	expect_bad("[::1", EGRESS_E_BAD_IPV6);
	expect_bad("[]", EGRESS_E_BAD_IPV6);
	expect_bad("[127.0.0.1]", EGRESS_E_BAD_IPV6);
	expect_bad("[::1]:443", EGRESS_E_BAD_IPV6);
	expect_bad("1:2:3:4:5:6:7:8:9", EGRESS_E_BAD_IPV6);
}

/*
 * The forms inet_aton(3), and so getaddrinfo(3), reads as 127.0.0.1 but
 * no dotted quad: a name check would pass them as names and the resolver
 * would dial loopback. Refused (docs/decisions.md).
 */
Test(canon, odd_ipv4_forms_are_refused)
{
	static const char *const odd[] = {
	    "2130706433",
	    "127.1",
	    "127.0.1",
	    "0x7f.1",
	    "0x7f000001",
	    "0177.0.0.1",
	    "0177.0.0.01",
	    "127.0.0.01",
	    "127.000.000.001",
	    "0x7F.0.0.1",
	    "1.2.3.4.5",
	    "256.0.0.1",
	    "example.0x",
	    "example.123",
	    "169.254.43518",
	};

	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++)
		expect_bad(odd[i], EGRESS_E_ODD_IPV4);
}

Test(canon, every_error_has_a_token_and_a_sentence)
{
	static const int codes[] = {EGRESS_E_EMPTY, EGRESS_E_NUL, EGRESS_E_CRLF,
	    EGRESS_E_ODD_IPV4, EGRESS_E_BAD_WILDCARD};

	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		cr_assert_str_neq(egress_name_errname(codes[i]), "unknown");
		cr_assert_str_neq(egress_name_strerror(codes[i]),
		    "unknown error");
	}
	cr_assert_str_eq(egress_name_errname(EGRESS_E_NUL), "nul");
	cr_assert_str_eq(egress_name_errname(EGRESS_E_USERINFO), "userinfo");
	cr_assert_str_eq(egress_name_strerror(EGRESS_E_NUL),
	    "contains a NUL byte");
	cr_assert_str_eq(egress_name_errname(-ENOSPC), "errno");
	cr_assert_str_eq(egress_name_strerror(-ENOSPC), strerror(ENOSPC));
	cr_assert_str_eq(egress_name_errname(-999999), "unknown");
	cr_assert_lt(EGRESS_E_EMPTY, -133, "outside errno's values");
}

/* ---- Ports and CIDR ----------------------------------------------------- */

Test(ports, single_and_ranges)
{
	struct egress_ports p;

	cr_assert_eq(egress_ports_parse("443", 3, &p), 0);
	cr_assert_eq(p.lo, 443);
	cr_assert_eq(p.hi, 443);
	cr_assert_eq(egress_ports_parse("8000-8100", 9, &p), 0);
	cr_assert_eq(p.lo, 8000);
	cr_assert_eq(p.hi, 8100);
	cr_assert_eq(egress_ports_parse("1-65535", 7, &p), 0);
	cr_assert_eq(egress_ports_parse("0", 1, &p), EGRESS_E_BAD_PORT);
	cr_assert_eq(egress_ports_parse("65536", 5, &p), EGRESS_E_BAD_PORT);
	cr_assert_eq(egress_ports_parse("080", 3, &p), EGRESS_E_BAD_PORT);
	cr_assert_eq(egress_ports_parse("+80", 3, &p), EGRESS_E_BAD_PORT);
	cr_assert_eq(egress_ports_parse("", 0, &p), EGRESS_E_BAD_PORT);
	cr_assert_eq(egress_ports_parse("80-", 3, &p), EGRESS_E_BAD_PORT);
	cr_assert_eq(egress_ports_parse("-80", 3, &p), EGRESS_E_BAD_PORT);
	cr_assert_eq(egress_ports_parse("9-8", 3, &p), EGRESS_E_PORT_RANGE);
	cr_assert_eq(egress_ports_parse("1-2-3", 5, &p), EGRESS_E_BAD_PORT);
	cr_assert_eq(egress_ports_parse("99999999999", 11, &p),
	    EGRESS_E_BAD_PORT);
}

static void
expect_cidr(const char *in, const char *canon_text, unsigned bits, unsigned lo,
    unsigned hi)
{
	struct egress_cidr c;
	struct egress_ports p;
	char out[64];
	int r = egress_cidr_parse(in, &c, &p);

	cr_assert_eq(r, 0, "%s: %s", in, egress_name_errname(r));
	cr_assert_eq(c.bits, bits, "%s", in);
	cr_assert_eq(p.lo, lo, "%s", in);
	cr_assert_eq(p.hi, hi, "%s", in);
	cr_assert_eq(egress_cidr_format(&c, &p, out, sizeof(out)), 0);
	cr_assert_str_eq(out, canon_text);
}

static void
expect_cidr_bad(const char *in, int code)
{
	struct egress_cidr c;
	struct egress_ports p;
	int r = egress_cidr_parse(in, &c, &p);

	cr_assert_eq(r, code, "%s: %s, want %s", in, egress_name_errname(r),
	    egress_name_errname(code));
}

Test(cidr, syntax)
{
	expect_cidr("127.0.0.1:8080", "127.0.0.1:8080", 32, 8080, 8080);
	expect_cidr("127.0.0.1/32:8080", "127.0.0.1:8080", 32, 8080, 8080);
	expect_cidr("10.0.0.0/8:443", "10.0.0.0/8:443", 8, 443, 443);
	expect_cidr("0.0.0.0/0:1-65535", "0.0.0.0/0:1-65535", 0, 1, 65535);
	expect_cidr("[::1]:8080", "[::1]:8080", 128, 8080, 8080);
	expect_cidr("[::1]/128:8080", "[::1]:8080", 128, 8080, 8080);
	expect_cidr("[FD00::]/8:8000-8100", "[fd00::]/8:8000-8100", 8, 8000,
	    8100);
	/* An IPv4-mapped range is the IPv4 range. */
	expect_cidr("[::ffff:127.0.0.1]:80", "127.0.0.1:80", 32, 80, 80);
	expect_cidr("[::ffff:10.0.0.0]/104:80", "10.0.0.0/8:80", 8, 80, 80);
}

Test(cidr, refusals)
{
	expect_cidr_bad("127.0.0.1", EGRESS_E_NO_PORT);
	expect_cidr_bad("10.0.0.0/8", EGRESS_E_NO_PORT);
	expect_cidr_bad("[::1]", EGRESS_E_NO_PORT);
	expect_cidr_bad("10.1.0.0/8:80", EGRESS_E_HOST_BITS);
	expect_cidr_bad("[fd00::1]/8:80", EGRESS_E_HOST_BITS);
	expect_cidr_bad("10.0.0.0/33:80", EGRESS_E_BAD_PREFIX);
	expect_cidr_bad("10.0.0.0/08:80", EGRESS_E_BAD_PREFIX);
	expect_cidr_bad("10.0.0.0/:80", EGRESS_E_BAD_PREFIX);
	expect_cidr_bad("[::]/129:80", EGRESS_E_BAD_PREFIX);
	expect_cidr_bad("::1:80", EGRESS_E_BAD_ADDRESS);
	expect_cidr_bad("[127.0.0.1]:80", EGRESS_E_BAD_ADDRESS);
	expect_cidr_bad("127.1:80", EGRESS_E_BAD_ADDRESS);
	expect_cidr_bad("0177.0.0.1:80", EGRESS_E_BAD_ADDRESS);
	expect_cidr_bad("localhost:80", EGRESS_E_BAD_ADDRESS);
	expect_cidr_bad("127.0.0.1:0", EGRESS_E_BAD_PORT);
	expect_cidr_bad("127.0.0.1:70000", EGRESS_E_BAD_PORT);
	expect_cidr_bad("127.0.0.1:90-80", EGRESS_E_PORT_RANGE);
	expect_cidr_bad("[::1]x:80", EGRESS_E_BAD_ADDRESS);
	expect_cidr_bad("", EGRESS_E_BAD_ADDRESS);
}

static struct egress_addr
addr(const char *s)
{
	struct egress_addr a;

	cr_assert_eq(egress_addr_parse(s, &a), 0, "%s", s);
	return a;
}

static struct egress_cidr
cidr(const char *s)
{
	struct egress_cidr c;
	struct egress_ports p;

	cr_assert_eq(egress_cidr_parse(s, &c, &p), 0, "%s", s);
	return c;
}

Test(cidr, contains_and_covers)
{
	struct egress_cidr ten = cidr("10.0.0.0/8:1"),
			   ten1 = cidr("10.1.0.0/16:1"),
			   ula = cidr("[fc00::]/7:1"), one = cidr("[::1]:1");
	struct egress_addr a = addr("10.200.3.4"),
			   mapped = addr("::ffff:10.0.0.1"),
			   fd = addr("fd12::1");

	cr_assert(egress_cidr_contains(&ten, &a));
	cr_assert(egress_cidr_contains(&ten, &mapped));
	cr_assert_not(egress_cidr_contains(&ula, &a));
	cr_assert(egress_cidr_contains(&ula, &fd));
	cr_assert_not(egress_cidr_contains(&one, &fd));
	cr_assert(egress_cidr_covers(&ten, &ten1));
	cr_assert_not(egress_cidr_covers(&ten1, &ten));
	cr_assert(egress_cidr_covers(&ten, &ten));
	cr_assert_not(egress_cidr_covers(&ula, &ten1));
}

Test(addr, parse_format_and_equal)
{
	struct egress_addr a = addr("::ffff:127.0.0.1"), b = addr("127.0.0.1");
	char out[64];

	cr_assert_eq(a.family, AF_INET, "mapped addresses read as IPv4");
	cr_assert(egress_addr_eq(&a, &b));
	cr_assert_eq(egress_addr_format(&a, out, sizeof(out)), 0);
	cr_assert_str_eq(out, "127.0.0.1");
	cr_assert_eq(egress_addr_parse("127.1", &a), EGRESS_E_BAD_ADDRESS);
	cr_assert_eq(egress_addr_parse("example.org", &a),
	    EGRESS_E_BAD_ADDRESS);
	cr_assert_eq(egress_addr_format(&b, out, 4), -ENOSPC);
}

/* ---- Address classes ---------------------------------------------------- */

/* The class of the address text S, through a real sockaddr. */
static enum egress_addr_class
class_of(const char *s)
{
	struct sockaddr_in in = {.sin_family = AF_INET};
	struct sockaddr_in6 in6 = {.sin6_family = AF_INET6};

	if (inet_pton(AF_INET, s, &in.sin_addr) == 1)
		return egress_addr_class((const struct sockaddr *)&in);
	cr_assert_eq(inet_pton(AF_INET6, s, &in6.sin6_addr), 1, "%s", s);
	return egress_addr_class((const struct sockaddr *)&in6);
}

static void
expect_class(const char *s, enum egress_addr_class want)
{
	enum egress_addr_class c = class_of(s);

	cr_assert_eq(c, want, "%s: %s, want %s", s, egress_addr_class_name(c),
	    egress_addr_class_name(want));
	cr_assert_eq(egress_addr_class_private(c),
	    want != EGRESS_ADDR_PUBLIC && want != EGRESS_ADDR_DOCUMENTATION,
	    "%s", s);
}

Test(addr_class, ipv4)
{
	expect_class("127.0.0.1", EGRESS_ADDR_LOOPBACK);
	expect_class("127.255.255.254", EGRESS_ADDR_LOOPBACK);
	expect_class("10.0.0.1", EGRESS_ADDR_RFC1918);
	expect_class("172.16.0.1", EGRESS_ADDR_RFC1918);
	expect_class("172.31.255.255", EGRESS_ADDR_RFC1918);
	expect_class("172.32.0.1", EGRESS_ADDR_PUBLIC);
	expect_class("192.168.1.1", EGRESS_ADDR_RFC1918);
	expect_class("169.254.169.254", EGRESS_ADDR_LINK_LOCAL);
	expect_class("169.254.0.1", EGRESS_ADDR_LINK_LOCAL);
	expect_class("100.64.0.1", EGRESS_ADDR_CGNAT);
	expect_class("100.127.255.255", EGRESS_ADDR_CGNAT);
	expect_class("100.128.0.1", EGRESS_ADDR_PUBLIC);
	expect_class("224.0.0.1", EGRESS_ADDR_MULTICAST);
	expect_class("239.255.255.250", EGRESS_ADDR_MULTICAST);
	expect_class("0.0.0.0", EGRESS_ADDR_UNSPECIFIED);
	expect_class("0.1.2.3", EGRESS_ADDR_UNSPECIFIED);
	expect_class("255.255.255.255", EGRESS_ADDR_BROADCAST);
	expect_class("240.0.0.1", EGRESS_ADDR_RESERVED);
	expect_class("192.0.2.1", EGRESS_ADDR_DOCUMENTATION);
	expect_class("198.51.100.7", EGRESS_ADDR_DOCUMENTATION);
	expect_class("203.0.113.9", EGRESS_ADDR_DOCUMENTATION);
	expect_class("198.18.0.1", EGRESS_ADDR_RESERVED);
	expect_class("192.0.0.8", EGRESS_ADDR_RESERVED);
	expect_class("192.88.99.1", EGRESS_ADDR_RESERVED);
	expect_class("8.8.8.8", EGRESS_ADDR_PUBLIC);
	expect_class("1.1.1.1", EGRESS_ADDR_PUBLIC);
}

Test(addr_class, ipv6)
{
	expect_class("::1", EGRESS_ADDR_LOOPBACK);
	expect_class("::", EGRESS_ADDR_UNSPECIFIED);
	expect_class("fe80::1", EGRESS_ADDR_LINK_LOCAL);
	expect_class("febf::1", EGRESS_ADDR_LINK_LOCAL);
	expect_class("fec0::1", EGRESS_ADDR_SITE_LOCAL);
	expect_class("fc00::1", EGRESS_ADDR_ULA);
	expect_class("fd00:ec2::254", EGRESS_ADDR_ULA);
	expect_class("ff02::1", EGRESS_ADDR_MULTICAST);
	expect_class("2001:db8::1", EGRESS_ADDR_DOCUMENTATION);
	expect_class("2002:7f00:1::1", EGRESS_ADDR_6TO4);
	expect_class("2001:0:4136:e378::1", EGRESS_ADDR_TEREDO);
	expect_class("2001:2::1", EGRESS_ADDR_RESERVED);
	expect_class("100::1", EGRESS_ADDR_RESERVED);
	expect_class("::7f00:1", EGRESS_ADDR_RESERVED);
	expect_class("64:ff9b:1::1", EGRESS_ADDR_RESERVED);
	expect_class("2606:4700:4700::1111", EGRESS_ADDR_PUBLIC);
	expect_class("2a00:1450::1", EGRESS_ADDR_PUBLIC);
}

/* An IPv4 address inside IPv6 has the class of the IPv4 address: the
 * rebinding answer ::ffff:127.0.0.1 is loopback, not "IPv6, public". */
Test(addr_class, ipv4_inside_ipv6)
{
	expect_class("::ffff:127.0.0.1", EGRESS_ADDR_LOOPBACK);
	expect_class("::ffff:169.254.169.254", EGRESS_ADDR_LINK_LOCAL);
	expect_class("::ffff:10.1.2.3", EGRESS_ADDR_RFC1918);
	expect_class("::ffff:8.8.8.8", EGRESS_ADDR_PUBLIC);
	expect_class("64:ff9b::127.0.0.1", EGRESS_ADDR_LOOPBACK);
	expect_class("64:ff9b::a9fe:a9fe", EGRESS_ADDR_LINK_LOCAL);
	expect_class("64:ff9b::192.168.0.1", EGRESS_ADDR_RFC1918);
	expect_class("64:ff9b::8.8.8.8", EGRESS_ADDR_PUBLIC);
}

Test(addr_class, names_and_other_families)
{
	struct fake_un {
		sa_family_t family;
		char path[108];
	} un = {AF_UNIX, "/x"};

	cr_assert_eq(egress_addr_class((const struct sockaddr *)&un),
	    EGRESS_ADDR_RESERVED);
	cr_assert_str_eq(egress_addr_class_name(EGRESS_ADDR_LINK_LOCAL),
	    "link_local");
	cr_assert_str_eq(egress_addr_class_name(EGRESS_ADDR_RFC1918),
	    "rfc1918");
	cr_assert_str_eq(egress_addr_class_name(EGRESS_ADDR_PUBLIC), "public");
	cr_assert_str_eq(egress_addr_class_name((enum egress_addr_class)(
			     EGRESS_ADDR_CLASS_LAST + 1)),
	    "unknown");
	for (int c = 0; c <= EGRESS_ADDR_CLASS_LAST; c++)
		cr_assert_str_neq(egress_addr_class_name(
				      (enum egress_addr_class)c),
		    "unknown");
}

/* ---- The host's own addresses ------------------------------------------ */

Test(local, list_fed_by_the_test)
{
	struct egress_addr v[2] = {addr("203.0.113.77"), addr("2a00:1::5")};
	struct egress_addrs local = {v, 2};
	struct sockaddr_in in = {.sin_family = AF_INET};
	struct sockaddr_in6 in6 = {.sin6_family = AF_INET6};

	inet_pton(AF_INET, "203.0.113.77", &in.sin_addr);
	cr_assert(egress_addr_is_local((const struct sockaddr *)&in, &local));
	inet_pton(AF_INET6, "::ffff:203.0.113.77", &in6.sin6_addr);
	cr_assert(egress_addr_is_local((const struct sockaddr *)&in6, &local));
	inet_pton(AF_INET6, "2a00:1::5", &in6.sin6_addr);
	cr_assert(egress_addr_is_local((const struct sockaddr *)&in6, &local));
	inet_pton(AF_INET, "203.0.113.78", &in.sin_addr);
	cr_assert_not(
	    egress_addr_is_local((const struct sockaddr *)&in, &local));
	cr_assert_not(egress_addr_is_local((const struct sockaddr *)&in, NULL));
}

/* getifaddrs(3) of this namespace: each address it lists, once. */
Test(local, getifaddrs_addresses_each_once)
{
	struct egress_addrs local;
	struct ifaddrs *list;
	size_t seen = 0;

	cr_assert_eq(egress_local_addrs(&local), 0);
	cr_assert_eq(getifaddrs(&list), 0);
	for (struct ifaddrs *i = list; i != NULL; i = i->ifa_next) {
		if (i->ifa_addr == NULL ||
		    (i->ifa_addr->sa_family != AF_INET &&
			i->ifa_addr->sa_family != AF_INET6))
			continue;
		cr_assert(egress_addr_is_local(i->ifa_addr, &local));
		seen++;
	}
	freeifaddrs(list);
	cr_assert_leq(local.n, seen);
	for (size_t i = 0; i < local.n; i++)
		for (size_t j = 0; j < i; j++)
			cr_assert_not(egress_addr_eq(&local.v[i], &local.v[j]),
			    "listed once");
	egress_addrs_clear(&local);
	cr_assert_null(local.v);
	cr_assert_eq(local.n, 0);
	egress_addrs_clear(NULL);
}

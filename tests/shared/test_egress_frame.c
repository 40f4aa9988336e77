/*
 * test_egress_frame.c: what a frame of a jail's packet socket says
 * (shared/egress_frame.c; issue 25): hand-built IPv4 and IPv6 packets,
 * TCP SYNs and other segments, UDP, extension headers, fragments, and
 * every truncation and random bytes (never read past the end: run it
 * under ASan or valgrind).
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "egress_frame.h"

#define TCP 6
#define UDP 17

/* An IPv4 header to DST with PROTO, then L4 (N bytes), into OUT. */
static size_t
ipv4(const char *dst, uint8_t proto, const uint8_t *l4, size_t n, uint8_t *out)
{
	memset(out, 0, 20);
	out[0] = 0x45;
	out[2] = (uint8_t)((20 + n) >> 8);
	out[3] = (uint8_t)(20 + n);
	out[8] = 64;
	out[9] = proto;
	inet_pton(AF_INET, "127.0.0.1", out + 12);
	cr_assert_eq(inet_pton(AF_INET, dst, out + 16), 1);
	memcpy(out + 20, l4, n);
	return 20 + n;
}

/* An IPv6 header to DST, NEXT, then REST (N bytes), into OUT. */
static size_t
ipv6(const char *dst, uint8_t next, const uint8_t *rest, size_t n, uint8_t *out)
{
	memset(out, 0, 40);
	out[0] = 0x60;
	out[4] = (uint8_t)(n >> 8);
	out[5] = (uint8_t)n;
	out[6] = next;
	out[7] = 64;
	inet_pton(AF_INET6, "::1", out + 8);
	cr_assert_eq(inet_pton(AF_INET6, dst, out + 24), 1);
	memcpy(out + 40, rest, n);
	return 40 + n;
}

/* A TCP header to PORT with FLAGS (20 bytes) into OUT. */
static size_t
tcp(uint16_t port, uint8_t flags, uint8_t *out)
{
	memset(out, 0, 20);
	out[0] = 0xc3, out[1] = 0x50; /* source port 50000 */
	out[2] = (uint8_t)(port >> 8), out[3] = (uint8_t)port;
	out[12] = 5 << 4;
	out[13] = flags;
	return 20;
}

static size_t
udp(uint16_t port, uint8_t *out)
{
	memset(out, 0, 12);
	out[0] = 0xc3, out[1] = 0x50;
	out[2] = (uint8_t)(port >> 8), out[3] = (uint8_t)port;
	out[5] = 12;
	return 12; /* 4 bytes of payload */
}

static void
expect(const uint8_t *pkt, size_t len, enum egress_frame_kind kind,
    const char *dst, uint16_t port)
{
	struct egress_frame f;
	char text[64];

	cr_assert_eq(egress_frame_parse(pkt, len, &f), kind);
	cr_assert_eq(f.kind, kind);
	if (kind == EGRESS_FRAME_OTHER)
		return;
	cr_assert_eq(egress_addr_format(&f.dst, text, sizeof(text)), 0);
	cr_assert_str_eq(text, dst);
	cr_assert_eq(f.dst_port, port);
	/* every truncation of an attempt is no attempt */
	for (size_t k = 0; k < len; k++) {
		enum egress_frame_kind got = egress_frame_parse(pkt, k, &f);

		cr_assert(got == EGRESS_FRAME_OTHER || k >= len - 4, "%zu", k);
	}
}

Test(egress_frame, ipv4_tcp)
{
	uint8_t l4[20], pkt[80];
	size_t n;

	tcp(443, 0x02, l4);
	n = ipv4("93.184.216.34", TCP, l4, 20, pkt);
	expect(pkt, n, EGRESS_FRAME_TCP_SYN, "93.184.216.34", 443);
	cr_assert_str_eq(egress_frame_proto(EGRESS_FRAME_TCP_SYN), "tcp");
	tcp(443, 0x12, l4); /* SYN-ACK: an answer */
	expect(pkt, ipv4("93.184.216.34", TCP, l4, 20, pkt), EGRESS_FRAME_OTHER,
	    NULL, 0);
	tcp(443, 0x10, l4); /* ACK */
	expect(pkt, ipv4("93.184.216.34", TCP, l4, 20, pkt), EGRESS_FRAME_OTHER,
	    NULL, 0);
	tcp(80, 0x02 | 0x08, l4); /* SYN with PSH: still a SYN */
	expect(pkt, ipv4("10.0.0.1", TCP, l4, 20, pkt), EGRESS_FRAME_TCP_SYN,
	    "10.0.0.1", 80);
}

Test(egress_frame, ipv4_udp_dns)
{
	uint8_t l4[12], pkt[80];
	size_t n;

	udp(53, l4);
	n = ipv4("10.255.255.53", UDP, l4, 12, pkt);
	expect(pkt, n, EGRESS_FRAME_UDP, "10.255.255.53", 53);
	cr_assert_str_eq(egress_frame_proto(EGRESS_FRAME_UDP), "udp");
}

Test(egress_frame, ipv4_options_and_fragments)
{
	uint8_t l4[20], pkt[120];
	size_t n;

	tcp(22, 0x02, l4);
	/* IHL 6: four bytes of options before TCP */
	memset(pkt, 0, sizeof(pkt));
	n = ipv4("192.0.2.1", TCP, l4, 20, pkt);
	memmove(pkt + 24, pkt + 20, 20);
	memset(pkt + 20, 1, 4); /* NOPs */
	pkt[0] = 0x46;
	expect(pkt, n + 4, EGRESS_FRAME_TCP_SYN, "192.0.2.1", 22);
	pkt[0] = 0x44; /* IHL 4: too short */
	expect(pkt, n + 4, EGRESS_FRAME_OTHER, NULL, 0);
	pkt[0] = 0x4f; /* IHL 15: beyond the packet */
	expect(pkt, 40, EGRESS_FRAME_OTHER, NULL, 0);
	n = ipv4("192.0.2.1", TCP, l4, 20, pkt);
	pkt[6] = 0x20; /* MF, offset 0: the first fragment */
	expect(pkt, n, EGRESS_FRAME_TCP_SYN, "192.0.2.1", 22);
	pkt[7] = 0x10; /* offset 16: no header here */
	expect(pkt, n, EGRESS_FRAME_OTHER, NULL, 0);
}

Test(egress_frame, ipv6_tcp_and_udp)
{
	uint8_t l4[20], pkt[120];

	tcp(443, 0x02, l4);
	expect(pkt, ipv6("2001:db8::1", TCP, l4, 20, pkt), EGRESS_FRAME_TCP_SYN,
	    "2001:db8::1", 443);
	udp(53, l4);
	expect(pkt, ipv6("fd00::53", UDP, l4, 12, pkt), EGRESS_FRAME_UDP,
	    "fd00::53", 53);
	tcp(443, 0x12, l4);
	expect(pkt, ipv6("2001:db8::1", TCP, l4, 20, pkt), EGRESS_FRAME_OTHER,
	    NULL, 0);
	/* ICMPv6 */
	expect(pkt, ipv6("2001:db8::1", 58, l4, 20, pkt), EGRESS_FRAME_OTHER,
	    NULL, 0);
}

Test(egress_frame, ipv6_extension_headers)
{
	uint8_t rest[128], pkt[200];
	size_t n = 0;

	/* hop-by-hop (8 bytes), destination options (16), fragment (8,
	 * the first), then UDP */
	memset(rest, 0, sizeof(rest));
	rest[0] = 60, rest[1] = 0;
	rest[8] = 44, rest[9] = 1;
	rest[24] = UDP, rest[26] = 0, rest[27] = 1; /* M set, offset 0 */
	n = 32 + udp(5353, rest + 32);
	expect(pkt, ipv6("2001:db8::2", 0, rest, n, pkt), EGRESS_FRAME_UDP,
	    "2001:db8::2", 5353);
	rest[26] = 0, rest[27] = 0x08; /* offset 1: not the first */
	expect(pkt, ipv6("2001:db8::2", 0, rest, n, pkt), EGRESS_FRAME_OTHER,
	    NULL, 0);
	/* an AH of 12 bytes (payload length 1) before TCP */
	memset(rest, 0, sizeof(rest));
	rest[0] = TCP, rest[1] = 1;
	n = 12 + tcp(8080, 0x02, rest + 12);
	expect(pkt, ipv6("2001:db8::3", 51, rest, n, pkt), EGRESS_FRAME_TCP_SYN,
	    "2001:db8::3", 8080);
	/* eight hop-by-hop headers then UDP: past the bound (seven pass) */
	memset(rest, 0, sizeof(rest));
	rest[7 * 8] = UDP;
	n = 64 + udp(53, rest + 64);
	expect(pkt, ipv6("2001:db8::4", 0, rest, n, pkt), EGRESS_FRAME_OTHER,
	    NULL, 0);
	rest[7 * 8] = 0;
	rest[6 * 8] = UDP;
	n = 56 + udp(53, rest + 56);
	expect(pkt, ipv6("2001:db8::4", 0, rest, n, pkt), EGRESS_FRAME_UDP,
	    "2001:db8::4", 53);
}

Test(egress_frame, not_ip)
{
	static const uint8_t arp[28] = {0, 1, 8, 0, 6, 4, 0, 1};
	uint8_t l4[20], pkt[80];
	struct egress_frame f;

	expect(arp, sizeof(arp), EGRESS_FRAME_OTHER, NULL, 0);
	cr_assert_eq(egress_frame_parse(NULL, 0, &f), EGRESS_FRAME_OTHER);
	tcp(443, 0x02, l4);
	ipv4("10.0.0.1", TCP, l4, 20, pkt);
	pkt[0] = 0x55; /* version 5 */
	expect(pkt, 40, EGRESS_FRAME_OTHER, NULL, 0);
}

/* Random bytes, each at every length: any answer, no read past them. */
Test(egress_frame, random_bytes)
{
	uint8_t *buf;
	struct egress_frame f;

	srand(25);
	for (int round = 0; round < 2000; round++) {
		size_t len = (size_t)(rand() % 100);

		buf = malloc(len + 1);
		for (size_t i = 0; i < len; i++)
			buf[i] = (uint8_t)rand();
		if (len > 0)
			buf[0] = (uint8_t)((round & 1 ? 0x40 : 0x60) |
			    (buf[0] & 0x0f));
		egress_frame_parse(buf, len, &f);
		free(buf);
	}
}

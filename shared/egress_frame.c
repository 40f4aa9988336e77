/* egress_frame.c: a packet-socket frame's destination (egress_frame.h).
 * Pure. */
#include "egress_frame.h"

#include <string.h>
#include <sys/socket.h>

#define PROTO_TCP 6
#define PROTO_UDP 17
#define IPV6_EXT_MAX 8

/* The transport header PROTO at PKT[OFF..LEN) into OUT. */
static enum egress_frame_kind
transport(const uint8_t *pkt, size_t len, size_t off, unsigned proto,
    struct egress_frame *out)
{
	if (proto == PROTO_TCP && len >= off + 20) {
		uint8_t flags = pkt[off + 13];

		if ((flags & 0x02) == 0 || (flags & 0x10) != 0)
			return EGRESS_FRAME_OTHER;
		out->kind = EGRESS_FRAME_TCP_SYN;
	} else if (proto == PROTO_UDP && len >= off + 8)
		out->kind = EGRESS_FRAME_UDP;
	else
		return EGRESS_FRAME_OTHER;
	out->dst_port = (uint16_t)(pkt[off + 2] << 8 | pkt[off + 3]);
	return out->kind;
}

static enum egress_frame_kind
ipv4(const uint8_t *pkt, size_t len, struct egress_frame *out)
{
	size_t ihl = (size_t)(pkt[0] & 0x0f) * 4;
	unsigned frag = (unsigned)(pkt[6] & 0x1f) << 8 | pkt[7];

	if (ihl < 20 || len < ihl || frag != 0)
		return EGRESS_FRAME_OTHER;
	out->dst.family = AF_INET;
	memcpy(out->dst.a, pkt + 16, 4);
	return transport(pkt, len, ihl, pkt[9], out);
}

static enum egress_frame_kind
ipv6(const uint8_t *pkt, size_t len, struct egress_frame *out)
{
	unsigned next = pkt[6];
	size_t off = 40;

	if (len < 40)
		return EGRESS_FRAME_OTHER;
	out->dst.family = AF_INET6;
	memcpy(out->dst.a, pkt + 24, 16);
	for (int i = 0; i < IPV6_EXT_MAX; i++) {
		if (next == PROTO_TCP || next == PROTO_UDP)
			return transport(pkt, len, off, next, out);
		if (len < off + 8)
			return EGRESS_FRAME_OTHER;
		if (next == 44) { /* fragment: 8 bytes, the first only */
			if ((pkt[off + 2] << 8 | (pkt[off + 3] & 0xf8)) != 0)
				return EGRESS_FRAME_OTHER;
			next = pkt[off];
			off += 8;
		} else if (next == 51) { /* AH: (len + 2) words of 4 */
			size_t n = ((size_t)pkt[off + 1] + 2) * 4;

			next = pkt[off];
			off += n;
		} else if (next == 0 || next == 43 || next == 60) {
			size_t n = ((size_t)pkt[off + 1] + 1) * 8;

			next = pkt[off];
			off += n;
		} else
			return EGRESS_FRAME_OTHER;
	}
	return EGRESS_FRAME_OTHER;
}

enum egress_frame_kind
egress_frame_parse(const uint8_t *pkt, size_t len, struct egress_frame *out)
{
	enum egress_frame_kind k = EGRESS_FRAME_OTHER;

	memset(out, 0, sizeof(*out));
	if (len >= 20 && pkt[0] >> 4 == 4)
		k = ipv4(pkt, len, out);
	else if (len >= 40 && pkt[0] >> 4 == 6)
		k = ipv6(pkt, len, out);
	if (k == EGRESS_FRAME_OTHER)
		memset(out, 0, sizeof(*out));
	return k;
}

const char *
egress_frame_proto(enum egress_frame_kind kind)
{
	switch (kind) {
	case EGRESS_FRAME_TCP_SYN:
		return "tcp";
	case EGRESS_FRAME_UDP:
		return "udp";
	case EGRESS_FRAME_OTHER:
		break;
	}
	return "";
}

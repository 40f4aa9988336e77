/*
 * egress_frame.h: what a frame on a jail's packet socket says (issue 25).
 * Jail init opens an AF_PACKET SOCK_DGRAM socket on the jail's lo and
 * hands it to stockade-proxy, which reads each frame the jail sends: an
 * IPv4 or IPv6 packet (the link header removed). A TCP SYN or a UDP
 * datagram to anything but the proxy's listener is a direct connection
 * that went around the proxy (the jail's routes send it to lo, where it
 * fails): the proxy reports it as a direct_connect refusal. Pure.
 */
#ifndef STOCKADE_EGRESS_FRAME_H
#define STOCKADE_EGRESS_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress_name.h"

/* What a frame is an attempt of. */
enum egress_frame_kind {
	EGRESS_FRAME_OTHER = 0, /* none of the below: nothing to report */
	EGRESS_FRAME_TCP_SYN, /* a TCP segment with SYN and without ACK */
	EGRESS_FRAME_UDP, /* a UDP datagram */
};

struct egress_frame {
	enum egress_frame_kind kind;
	struct egress_addr dst; /* the destination address */
	uint16_t dst_port; /* host order */
};

/*
 * Reads the IP packet PKT[0..LEN) (any bytes: a frame of an AF_PACKET
 * SOCK_DGRAM socket) into OUT. IPv4 (RFC 791): a header of IHL words
 * (5 to 15) within LEN, the protocol's header at its end; a fragment
 * other than the first (offset not 0) is OTHER. IPv6 (RFC 8200): the
 * extension headers hop-by-hop (0), routing (43), destination options
 * (60), fragment (44, a first fragment only) and AH (51, RFC 4302) are
 * skipped, at most 8 of them; anything else before TCP (6) or UDP (17)
 * is OTHER. TCP (RFC 9293): flags byte 13, SYN 0x02, ACK 0x10. Every
 * length is checked against LEN: a truncated packet is OTHER. Returns
 * OUT->kind (OUT zeroed for OTHER).
 */
enum egress_frame_kind egress_frame_parse(const uint8_t *pkt, size_t len,
    struct egress_frame *out);

/* "tcp" or "udp" for a frame's KIND, the detail of its refusal; "" for
 * OTHER. A static string. */
const char *egress_frame_proto(enum egress_frame_kind kind);

#endif

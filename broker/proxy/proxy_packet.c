/*
 * proxy_packet.c: a job's packet socket (proxy.h, egress_frame.h):
 * every frame the jail sent on its lo that is a TCP SYN or a UDP
 * datagram to anything but the proxy's listener and the jail's own
 * loopback is a direct_connect refusal of the job (DNS from the jail
 * shows as udp port 53, to a loopback resolver too).
 */
#include <errno.h>
#include <linux/if_packet.h>
#include <string.h>
#include <sys/socket.h>

#include "egress_frame.h"
#include "proxy.h"

/* Frames read per event, so that a flood does not starve the rest. */
#define FRAMES_PER_EVENT 64

static void
frame(struct proxy_job *j, const uint8_t *pkt, size_t len)
{
	struct egress_frame f;
	char text[INET6_ADDRSTRLEN];

	if (egress_frame_parse(pkt, len, &f) == EGRESS_FRAME_OTHER)
		return;
	if (f.kind == EGRESS_FRAME_TCP_SYN && f.dst_port == j->spec.port &&
	    egress_addr_eq(&f.dst, &j->self))
		return; /* to the proxy */
	/* The jail's own loopback is the job's to use (a test server and
	 * its client in one job): only a name lookup there, port 53, is
	 * one that went around the proxy. */
	if (egress_addr_classify(&f.dst) == EGRESS_ADDR_LOOPBACK &&
	    f.dst_port != 53)
		return;
	if (egress_addr_format(&f.dst, text, sizeof(text)) < 0)
		return;
	egress_report_refusal(&j->rep, text, strlen(text), f.dst_port,
	    EGRESS_REASON_DIRECT_CONNECT, egress_frame_proto(f.kind));
}

int
proxy_packet_read(struct proxy *px, unsigned slot)
{
	struct proxy_job *j = &px->job[slot];
	static uint8_t pkt[65536];
	int i;

	for (i = 0; i < FRAMES_PER_EVENT; i++) {
		struct sockaddr_ll ll;
		socklen_t len = sizeof(ll);
		ssize_t n = recvfrom(j->pfd, pkt, sizeof(pkt), MSG_DONTWAIT,
		    (struct sockaddr *)&ll, &len);

		if (n < 0)
			break;
		if (len >= sizeof(ll) && ll.sll_pkttype == PACKET_OUTGOING)
			frame(j, pkt, (size_t)n);
	}
	return i;
}

/*
 * fake_launcher.c: stand-ins for stockade-launcher that stop answering,
 * for the supervisor's deadlines (test_session.c). The broker starts its
 * launcher with a fixed argv ("stockade-launcher --ipc-fd 3") and an empty
 * environment, so the behaviour is compiled in; tests/meson.build builds
 * this file twice:
 *
 *   fake-launcher-silent  (FAKE_ANSWER_HELLO 0) never answers HELLO;
 *   fake-launcher-hang    (FAKE_ANSWER_HELLO 1) answers HELLO as the real
 *                         launcher does, then never answers RUN.
 *
 * Both keep reading (and ignoring) whatever the broker sends, closing any
 * descriptor that comes with it, and exit when the broker closes its end.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto.h"

#ifndef FAKE_ANSWER_HELLO
#error "build with -DFAKE_ANSWER_HELLO=0 or 1"
#endif

static uint8_t msg[PROTO_MAX_MSG];

int
main(int argc, char **argv)
{
	int sock;

	if (argc != 3 || strcmp(argv[1], "--ipc-fd") != 0) {
		fprintf(stderr, "usage: %s --ipc-fd N\n", argv[0]);
		return 2;
	}
	sock = atoi(argv[2]);
	for (;;) {
		const uint8_t *body;
		uint16_t type;
		size_t len;
		int fd = -1, n;

		n = proto_recv(sock, msg, sizeof(msg), &fd);
		if (fd >= 0)
			close(fd);
		if (n <= 0)
			return n == 0 ? 0 : 1;
		if (proto_decode_header(msg, (size_t)n, &type, &body, &len) < 0)
			return 1;
		if (FAKE_ANSWER_HELLO && type == PROTO_HELLO) {
			uint8_t reply[64];
			int r = proto_encode_hello_reply(reply, sizeof(reply),
			    PROTO_VERSION, (uint32_t)getpid());

			if (r < 0 || proto_send(sock, reply, (size_t)r, -1) < 0)
				return 1;
		}
		/* Anything else (RUN, CANCEL): never answered. */
	}
}

/* egress_ifaddrs.c: the host's own addresses from getifaddrs(3)
 * (egress_name.h), apart from the pure code so that tests feed lists. */
#include "egress_name.h"

#include <errno.h>
#include <ifaddrs.h>
#include <stdlib.h>

#define _cleanup_(f) __attribute__((cleanup(f)))

static void
freeifaddrsp(struct ifaddrs **p)
{
	if (*p != NULL)
		freeifaddrs(*p);
}

void
egress_addrs_clear(struct egress_addrs *out)
{
	if (out == NULL)
		return;
	free(out->v);
	out->v = NULL;
	out->n = 0;
}

/* Appends A to OUT unless it is there already. */
static int
add_once(struct egress_addrs *out, const struct egress_addr *a)
{
	struct egress_addr *v;

	for (size_t i = 0; i < out->n; i++)
		if (egress_addr_eq(&out->v[i], a))
			return 0;
	v = reallocarray(out->v, out->n + 1, sizeof(*v));
	if (v == NULL)
		return -ENOMEM;
	out->v = v;
	out->v[out->n++] = *a;
	return 0;
}

int
egress_local_addrs(struct egress_addrs *out)
{
	_cleanup_(freeifaddrsp) struct ifaddrs *list = NULL;
	struct egress_addr a;

	out->v = NULL;
	out->n = 0;
	if (getifaddrs(&list) < 0)
		return -errno;
	for (const struct ifaddrs *i = list; i != NULL; i = i->ifa_next) {
		if (i->ifa_addr == NULL ||
		    egress_addr_from_sockaddr(i->ifa_addr, &a) < 0)
			continue;
		if (add_once(out, &a) < 0) {
			egress_addrs_clear(out);
			return -ENOMEM;
		}
	}
	return 0;
}

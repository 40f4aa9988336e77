/*
 * netns.c: jail init's set-up of the jail's network namespace
 * (init_internal.h): the loopback interface up, TCP's buffers bounded.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fsutil.h"
#include "init_internal.h"

/* Writes the text V to the sysctl file PATH. Returns 0 or -errno. */
static int
write_sysctl(const char *path, const char *v)
{
	size_t n = strlen(v);
	int fd, e = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, v, n) != (ssize_t)n)
		e = errno != 0 ? -errno : -EIO;
	close(fd);
	return e;
}

/*
 * TCP's buffer autotuning in the jail's network namespace capped at the
 * socket defaults (net/core/rmem_default and wmem_default, which the
 * namespace shows read-only): net/ipv4/tcp_rmem and tcp_wmem, per
 * network namespace, writable by init with CAP_NET_ADMIN in the
 * namespace it owns (tcp(7)). A loopback connection then queues what the
 * monitor charges a socket (enforce_proc.c, enf_socket_charge), not the
 * host's maximum of 6 MiB received and 4 MiB sent. Returns 0 or -errno.
 */
int
jail_init_tcp_buffers(void)
{
	static const char *const core[] = {"/proc/sys/net/core/rmem_default",
	    "/proc/sys/net/core/wmem_default"};
	static const char *const tcp[] = {"/proc/sys/net/ipv4/tcp_rmem",
	    "/proc/sys/net/ipv4/tcp_wmem"};
	static const unsigned initial[] = {131072, 16384};
	char v[64];
	int e;

	for (int i = 0; i < 2; i++) {
		unsigned long max;
		FILE *f = fopen(core[i], "re");

		if (f == NULL)
			return -errno;
		if (fscanf(f, "%lu", &max) != 1)
			max = 0;
		fclose(f);
		if (max < 4096)
			return -ERANGE;
		snprintf(v, sizeof(v), "4096 %lu %lu\n",
		    initial[i] < max ? (unsigned long)initial[i] : max, max);
		if ((e = write_sysctl(tcp[i], v)) < 0)
			return e;
	}
	return 0;
}

int
jail_init_loopback(void)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int e = 0;

	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) {
		e = -errno;
	} else {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
			e = -errno;
	}
	close(fd);
	return e;
}

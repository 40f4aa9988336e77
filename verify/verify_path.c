/*
 * verify_path.c: how stockade-check and stockade-eval find the broker
 * they drive (verify.h), the reverse of how the broker finds them
 * (broker/host/install_path.h).
 */
#include "verify.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "install_path.h"

/* Takes CAND into DST when it is an executable regular file, else
 * appends it to TRIED. Returns true when taken. */
static bool
take(const char *cand, char *dst, size_t len, char *tried, size_t triedlen)
{
	int fd = install_open_exe(cand);

	if (fd >= 0) {
		close(fd);
		return strlcpy(dst, cand, len) < len;
	}
	if (tried != NULL && triedlen > 0) {
		if (tried[0] != '\0')
			strlcat(tried, ", ", triedlen);
		strlcat(tried, cand, triedlen);
	}
	return false;
}

int
verify_find_broker(char *dst, size_t len, char *tried, size_t triedlen)
{
	char dir[PATH_MAX], up[PATH_MAX], cand[PATH_MAX];
	const char *env = getenv("STOCKADE_BROKER");

	if (tried != NULL && triedlen > 0)
		tried[0] = '\0';
	if (env != NULL && env[0] == '/' &&
	    take(env, dst, len, tried, triedlen))
		return 0;
	if (install_self_dir(dir, sizeof(dir)) == 0) {
		if (snprintf(cand, sizeof(cand), "%s/stockade", dir) <
			(int)sizeof(cand) &&
		    take(cand, dst, len, tried, triedlen))
			return 0;
		if (install_rel_join(up, dir, STOCKADE_LIBEXEC_TO_BIN) &&
		    snprintf(cand, sizeof(cand), "%s/stockade", up) <
			(int)sizeof(cand) &&
		    take(cand, dst, len, tried, triedlen))
			return 0;
	}
	if (take(STOCKADE_BINDIR "/stockade", dst, len, tried, triedlen))
		return 0;
	return -ENOENT;
}

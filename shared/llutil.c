/* llutil.c: see llutil.h. */
#include "llutil.h"

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

int
ll_abi(void)
{
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0,
	    LANDLOCK_CREATE_RULESET_VERSION);

	return v < 0 ? -errno : (int)v;
}

uint64_t
ll_fs_rights(int abi)
{
	uint64_t r = LL_FS_ABI1;

	if (abi >= 2)
		r |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		r |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		r |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return r;
}

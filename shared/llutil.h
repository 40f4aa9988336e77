/*
 * llutil.h: what the broker's Landlock confinement (broker/host/confine.c) and
 * the jail's (launcher/payload/landlock_jail.c) share: the ABI probe and the
 * file-system rights an ABI knows (landlock(7), "Access rights").
 */
#ifndef STOCKADE_LLUTIL_H
#define STOCKADE_LLUTIL_H

#include <stdint.h>

#include <linux/landlock.h>

/* What older kernel headers (Debian 12: ABI 1) lack. */
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13) /* ABI 2 */
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#endif
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0) /* ABI 4 */
#endif
#ifndef LANDLOCK_ACCESS_NET_CONNECT_TCP
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1) /* ABI 4 */
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1) /* ABI 6 */
#endif

/* Every file-system right of Landlock ABI 1 (EXECUTE .. MAKE_SYM). */
#define LL_FS_ABI1 ((1ULL << 13) - 1)

/* The rights a rule on a non-directory may carry (landlock_add_rule(2):
 * EINVAL otherwise). */
#define LL_FS_FILE                                                       \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |    \
	    LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | \
	    LANDLOCK_ACCESS_FS_IOCTL_DEV)

/* The running kernel's Landlock ABI version (landlock_create_ruleset(2)
 * with LANDLOCK_CREATE_RULESET_VERSION), or a negative errno: -ENOSYS
 * without Landlock in the kernel, -EOPNOTSUPP when it is not enabled. */
int ll_abi(void);

/* Every file-system right ABI knows: ABI 1's, REFER from 2, TRUNCATE from
 * 3, IOCTL_DEV from 5. */
uint64_t ll_fs_rights(int abi);

#endif

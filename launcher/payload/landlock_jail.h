/*
 * landlock_jail.h: the payload's Landlock domain (architecture.md, "The
 * jail, layer by layer"; issue 5, item 2).
 */
#ifndef STOCKADE_LANDLOCK_JAIL_H
#define STOCKADE_LANDLOCK_JAIL_H

#include "proto.h"

/*
 * Builds the Landlock ruleset for SPEC's jail and returns its descriptor
 * (close-on-exec, owned by the caller), with the kernel's Landlock ABI
 * version in *ABI. Jail init calls it after pivot_root, before its
 * payload exists (a warm pool's jail has it ready before the job comes);
 * the payload applies it with jail_landlock_restrict. Sources: landlock(7),
 * landlock_create_ruleset(2), landlock_add_rule(2),
 * landlock_restrict_self(2), and the kernel's
 * Documentation/userspace-api/landlock.rst ("Backward and forward
 * compatibility", "Filesystem flags", "Network flags", "Scope flags").
 *
 * The ruleset handles every file-system right the kernel's ABI has (EXECUTE
 * to MAKE_SYM from ABI 1, REFER from 2, TRUNCATE from 3, IOCTL_DEV from 5;
 * a right the ABI lacks is dropped, never the whole layer); from ABI 4 TCP
 * bind and connect, with no rule, so both are refused on every port (the
 * jail's network is off); from ABI 6 the abstract unix socket and signal
 * scopes, so nothing outside the payload's domain can be reached by either.
 * An ABI above the last one known here (7) is used with the rights of 7.
 *
 * The rules, paths inside the jail, each opened O_PATH | O_NOFOLLOW (a
 * symbolic link gets no rule: what it points at has its own or none):
 *   - read and execute: every policy bind target that exists, except
 *     MOUNT_RO_BIND_UNSAFE_NO_LANDLOCK ones (test-only: a bind the mount
 *     layer shows but Landlock does not open); the generated /etc;
 *   - read (files and directories): /proc;
 *   - read and write: /dev/null, /dev/zero, /dev/full;
 *   - read: /dev/random, /dev/urandom;
 *   - read, write, device ioctls and directory listing: /dev/pts, with
 *     JOB_F_DEVPTS only (/dev/ptmx is pts/ptmx);
 *   - everything but making character or block devices and device ioctls:
 *     /work, /tmp, SPEC->home, and /dev/shm (there without execute, as its
 *     mount is noexec).
 * Nothing else: not even listing / or /dev. A rule is granted on the
 * object the path names and everything below it, so an unsafe bind nested
 * below an ordinary one is covered by the ordinary one's rule.
 *
 * Layers switched off (docs/layers.md): with mount_ns off the rules name
 * host paths: the policy's bind sources read and execute, the workspace
 * (the current directory, with the private TMPDIR in it) everything but
 * devices, /dev/null, zero, full, random and urandom as above; nothing
 * else (no /etc, /proc, /tmp, home). With network_ns off no network
 * right is handled and abstract unix sockets are not scoped (signals
 * still are). With private_cwd off a missing home gets no rule.
 *
 * Returns the descriptor, or a negative errno: -EOPNOTSUPP when the
 * kernel has no usable Landlock (not built in, or not enabled at boot:
 * the caller must refuse the job, never run it unconfined); -ENOENT when
 * a path the jail always has is missing; any other from the system
 * calls. Every other descriptor it opens is closed before it returns.
 */
int jail_landlock_build(const struct job_spec *spec, int *abi);

/*
 * Confines the calling process, the payload, with ruleset RS
 * (jail_landlock_build), for good: its children inherit the domain
 * (landlock_restrict_self(2)). Call it once no_new_privs is set (an
 * unprivileged landlock_restrict_self needs it) and before seccomp, so
 * the filter need not allow the landlock_* calls. Closes RS on success.
 * Returns 0 or a negative errno.
 */
int jail_landlock_restrict(int rs);

#endif

/* preflight.h: refusing to run when the kernel lacks a layer. */
#ifndef STOCKADE_PREFLIGHT_H
#define STOCKADE_PREFLIGHT_H

#include <stddef.h>

/* Exit status of a command refused for a missing kernel feature
 * (EX_UNAVAILABLE, sysexits.h). */
#define EXIT_REFUSED 69

/*
 * Checks that this process can create an unprivileged user namespace,
 * first from the sysctls that disable it (user.max_user_namespaces,
 * kernel.unprivileged_userns_clone, Ubuntu's
 * kernel.apparmor_restrict_unprivileged_userns), then by creating one in
 * a short-lived child and, in it, a mount namespace: under Ubuntu 24.04's
 * restriction the user namespace is created but holds no capability
 * (the unprivileged_userns AppArmor profile), which only that second
 * step shows; a mount namespace refused otherwise is left to doctor's
 * namespaces check. Returns 0, or -1 with MSG (LEN bytes) set to the
 * cause and the fix. Cost: one fork, about a millisecond.
 */
int preflight_userns(char *msg, size_t len);

#endif

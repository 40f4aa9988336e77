/* preflight.c: see preflight.h. */
#include "preflight.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fsutil.h"

int
preflight_userns(char *msg, size_t len)
{
	bool restricted;
	pid_t pid;
	int st;

	if (read_number_at(AT_FDCWD, "/proc/sys/user/max_user_namespaces") ==
	    0) {
		snprintf(msg, len,
		    "user namespaces are disabled "
		    "(user.max_user_namespaces = 0). Fix: sysctl -w "
		    "user.max_user_namespaces=15000, and make it "
		    "permanent in /etc/sysctl.d/");
		return -1;
	}
	if (read_number_at(AT_FDCWD,
		"/proc/sys/kernel/unprivileged_userns_clone") == 0) {
		snprintf(msg, len,
		    "unprivileged user namespaces are disabled "
		    "(kernel.unprivileged_userns_clone = 0). Fix: sysctl -w "
		    "kernel.unprivileged_userns_clone=1, and make it "
		    "permanent in /etc/sysctl.d/");
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(msg, len, "cannot fork to probe user namespaces: %s",
		    strerror(errno));
		return -1;
	}
	/* Exit 1: no user namespace. Exit 2: one, but no capability in it:
	 * under Ubuntu's restriction the kernel lets an unconfined process
	 * create it and AppArmor then moves the process to its
	 * unprivileged_userns profile, which denies every capability there
	 * (apparmor.d/unprivileged_userns), so the first step of every jail,
	 * a mount namespace, fails. */
	if (pid == 0)
		_exit(unshare(CLONE_NEWUSER) != 0   ? 1
			: unshare(CLONE_NEWNS) != 0 ? 2
						    : 0);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	restricted = read_number_at(AT_FDCWD,
			 "/proc/sys/kernel/"
			 "apparmor_restrict_unprivileged_userns") == 1;
	/* Anything else that refuses the mount namespace (a container's
	 * profile) is the namespaces check's to name (doctor.c). */
	if (WIFEXITED(st) && WEXITSTATUS(st) == 2 && !restricted)
		return 0;
	if (restricted) {
		snprintf(msg, len,
		    "AppArmor restricts unprivileged user "
		    "namespaces (kernel.apparmor_restrict_unprivileged_userns"
		    " = 1, the Ubuntu 24.04 default). Fix: install an "
		    "AppArmor profile for stockade that allows userns "
		    "(README.md, 'When stockade refuses'), or sysctl -w "
		    "kernel.apparmor_restrict_unprivileged_userns=0");
		return -1;
	}
	snprintf(msg, len,
	    "this process cannot create a user namespace "
	    "(inside a container or a seccomp profile that forbids it?). "
	    "Fix: allow unprivileged user namespaces for stockade's user; "
	    "in a container, run it with a profile that permits unshare "
	    "and clone with CLONE_NEWUSER");
	return -1;
}

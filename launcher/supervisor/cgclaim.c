/* cgclaim.c: cg_claim_own (cgroup.h), the launcher taking its own delegated
 * cgroup for job leaves. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "cgroup_internal.h"
#include "fsutil.h"

/* Every interface file read here is a few hundred bytes at most. */

/* ---- claiming the launcher's own cgroup ---- */

#define PROCS_MAX (1 << 20) /* bytes of cgroup.procs read, at most */
#define DELEGATE                                                              \
	"start stockade in a delegated scope of its own (systemd-run --user " \
	"--scope -p Delegate=yes stockade ...; in a unit, Delegate=yes) or "  \
	"name a delegated cgroup in the policy's [limits] cgroup"

/* Sets WHY from FMT and returns R. */
static int __attribute__((format(printf, 4, 5)))
fail(char *why, size_t whylen, int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return r;
}

/* Writes the N strings S into NAME under DIR, opened once, one write(2)
 * each (cgroup.procs takes one pid a write); *DONE: how many went in. */
static int
write_each(int dir, const char *name, const char *const *s, size_t n,
    size_t *done)
{
	_cleanup_close_ int fd = openat(dir, name,
	    O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	ssize_t w;

	*done = 0;
	if (fd < 0)
		return -errno;
	for (; *done < n; (*done)++) {
		while ((w = write(fd, s[*done], strlen(s[*done]))) < 0 &&
		    errno == EINTR)
			;
		if (w < 0 || (size_t)w != strlen(s[*done]))
			return w < 0 ? -errno : -EIO;
	}
	return 0;
}

/* Reads cgroup.procs under DIR (up to PROCS_MAX bytes): which of the N
 * lines WANT ("pid\n") are there (HAS), and how many other lines
 * (anything else is some other process). */
static int
scan_procs(int dir, const char *const *want, bool *has, size_t n,
    size_t *others)
{
	_cleanup_free_ char *buf = malloc(PROCS_MAX);
	ssize_t got;

	*others = 0;
	for (size_t i = 0; i < n; i++)
		has[i] = false;
	if (buf == NULL)
		return -ENOMEM;
	if ((got = cg_read_at(dir, "cgroup.procs", buf, PROCS_MAX)) < 0)
		return (int)got;
	for (char *p = buf, *nl; *p != '\0'; p = nl + (*nl != '\0')) {
		size_t len = (size_t)((nl = strchrnul(p, '\n')) - p) + 1, i;

		for (i = 0; i < n; i++)
			if (strncmp(p, want[i], len - 1) == 0 &&
			    want[i][len - 1] == '\n')
				break;
		if (i < n)
			has[i] = true;
		else
			(*others)++;
	}
	return 0;
}

/*
 * Steps 1 and 2 of cg_claim_own on OWN: 1 when it is claimed already
 * (memory and pids in its cgroup.subtree_control), 0 when it is
 * delegated (memory, pids and, when WANT_CPU, cpu in its
 * cgroup.controllers), else a negative errno with WHY.
 */
static int
claimable(int own, bool want_cpu, char *why, size_t whylen)
{
	static const char *const need[] = {"memory", "pids", "cpu"};
	char buf[FILE_BUF];
	const char *file;
	int r;

	for (size_t f = 0; f < 2; f++) {
		file = f == 0 ? "cgroup.subtree_control" : "cgroup.controllers";
		if ((r = (int)cg_read_at(own, file, buf, sizeof(buf))) < 0)
			return fail(why, whylen, r,
			    "cannot read %s of the "
			    "launcher's cgroup: %s (is it a cgroup v2 "
			    "directory?)",
			    file, strerror(-r));
		if (f == 0 && cg_has_word(buf, "memory") &&
		    cg_has_word(buf, "pids"))
			return 1;
		for (size_t i = 0; f == 1 && i < (want_cpu ? 3u : 2u); i++)
			if (!cg_has_word(buf, need[i]))
				return fail(why, whylen, -EOPNOTSUPP,
				    "the "
				    "launcher's cgroup is not "
				    "delegated (%s is not in its "
				    "cgroup.controllers): " DELEGATE,
				    need[i]);
	}
	return 0;
}

/*
 * Step 3 of cg_claim_own: OWN's cgroup.procs hold no other process than
 * the NWANT of WANT (pid lines: the broker, the launcher, the zygote),
 * the launcher (pid LAUNCHER) among them; *HAS says which are there.
 * Returns 0, or a negative errno with WHY.
 */
static int
only_ours(int own, const char *const *want, bool *has, size_t nwant,
    pid_t launcher, char *why, size_t whylen)
{
	size_t others;
	int r;

	r = scan_procs(own, want, has, nwant, &others);
	if (r == -EFBIG || (r == 0 && others > 0))
		return fail(why, whylen, -EBUSY,
		    "the launcher's cgroup holds "
		    "%s%zu other process%s than stockade's own (the "
		    "broker, the launcher and its zygote), which "
		    "stockade may not move: " DELEGATE,
		    r < 0 ? "at least " : "",
		    r < 0 ? (size_t)PROCS_MAX / 8 - nwant : others,
		    r == 0 && others == 1 ? "" : "es");
	if (r < 0)
		return fail(why, whylen, r,
		    "cannot read cgroup.procs of the "
		    "launcher's cgroup: %s",
		    strerror(-r));
	if (!has[1])
		return fail(why, whylen, -ESRCH,
		    "the launcher (pid %d) is not "
		    "in what was taken for its cgroup: " DELEGATE,
		    (int)launcher);
	return 0;
}

/*
 * Steps 4 and 5 of cg_claim_own: moves the NMOVE pids of MOVE (pid
 * lines, the broker first) into OWN's leaf CG_SUPERVISOR, made when
 * missing, then enables memory, pids (and cpu when WANT_CPU) for OWN's
 * children. Returns 0; or a negative errno with WHY, once what it did
 * is undone (the pids moved go back, a leaf it made is removed).
 */
static int
move_and_enable(int own, const char *const *move, size_t nmove, bool want_cpu,
    char *why, size_t whylen)
{
	char ctl[32];
	const char *back[3], *cp = ctl;
	size_t moved = 0, d;
	bool made = false;
	_cleanup_close_ int leaf = -1;
	int r, e;

	if (mkdirat(own, CG_SUPERVISOR, 0755) == 0)
		made = true;
	else if ((e = errno) != EEXIST)
		return fail(why, whylen, -e,
		    "cannot make %s in the launcher's "
		    "cgroup: %s; uid %u needs write access to it: " DELEGATE,
		    CG_SUPERVISOR, strerror(e), (unsigned)geteuid());
	leaf = openat(own, CG_SUPERVISOR,
	    O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	if (leaf < 0) {
		r = errno == ELOOP ? -ENOTDIR : -errno;
		fail(why, whylen, r,
		    "cannot open %s in the launcher's cgroup: "
		    "%s (remove it if it is not a directory)",
		    CG_SUPERVISOR, strerror(-r));
	} else if ((r = write_each(leaf, "cgroup.procs", move, nmove, &moved)) <
	    0) {
		fail(why, whylen, r,
		    "cannot move pid %.*s into "
		    "%s/cgroup.procs: %s; uid %u needs write access to it "
		    "and to the launcher's cgroup.procs: " DELEGATE,
		    (int)strlen(move[moved]) - 1, move[moved], CG_SUPERVISOR,
		    strerror(-r), (unsigned)geteuid());
	} else {
		/* 5: the controllers for the children. */
		snprintf(ctl, sizeof(ctl), "+memory +pids%s",
		    want_cpu ? " +cpu" : "");
		r = write_each(own, "cgroup.subtree_control", &cp, 1, &d);
		if (r == 0)
			return 0;
		fail(why, whylen, r,
		    "cannot write '%s' to the launcher's "
		    "cgroup.subtree_control: %s (EBUSY: a process joined the "
		    "cgroup meanwhile)",
		    ctl, strerror(-r));
	}
	/* Undone: the pids moved go back, the leaf made is removed. */
	for (d = 0; d < moved; d++)
		back[d] = move[moved - 1 - d];
	if (moved > 0 &&
	    (e = write_each(own, "cgroup.procs", back, moved, &d)) < 0) {
		size_t len = strlen(why);

		snprintf(why + len, whylen - len,
		    "; moving them back failed "
		    "too: %s",
		    strerror(-e));
	}
	if (made)
		(void)cg_leaf_remove(own, CG_SUPERVISOR);
	return r;
}

int
cg_claim_own(int own, pid_t broker, pid_t launcher, pid_t zygote, bool want_cpu,
    char *why, size_t whylen)
{
	char pids[3][16];
	const char *want[3] = {pids[0], pids[1], pids[2]};
	const char *move[3];
	size_t nmove = 0, nwant;
	bool has[3];
	int r;

	if (launcher <= 0 || broker < 0 || zygote < 0 || broker == launcher ||
	    (zygote > 0 && (zygote == launcher || zygote == broker)))
		return fail(why, whylen, -EINVAL,
		    "cg_claim_own: bad pids "
		    "%d, %d and %d",
		    (int)broker, (int)launcher, (int)zygote);
	/* 1, 2: claimed already, or not delegated. */
	if ((r = claimable(own, want_cpu, why, whylen)) != 0)
		return r > 0 ? 0 : r;
	/* 3: only the broker, the launcher and its zygote are there. */
	snprintf(pids[0], sizeof(pids[0]), "%d\n", (int)broker);
	snprintf(pids[1], sizeof(pids[1]), "%d\n", (int)launcher);
	snprintf(pids[2], sizeof(pids[2]), "%d\n", (int)zygote);
	nwant = zygote > 0 ? 3 : 2;
	if ((r = only_ours(own, want, has, nwant, launcher, why, whylen)) < 0)
		return r;
	/* 4: into the leaf, the broker first. */
	for (size_t i = 0; i < nwant; i++)
		if (has[i])
			move[nmove++] = pids[i];
	return move_and_enable(own, move, nmove, want_cpu, why, whylen);
}

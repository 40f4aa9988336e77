/*
 * session.c: the set-up `stockade serve` (serve.c) and `stockade mcp`
 * (cmd_mcp.c) share before their transports differ (commands.h): the
 * policy loaded and refused when only an evaluation may run it, the
 * host's layers checked, the workspace opened, the launcher found; then
 * the spawner started and the broker confined; and the signals that end
 * a session blocked.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "doctor.h"
#include "fsutil.h"
#include "log.h"
#include "policy.h"
#include "preflight.h"
#include "result.h"
#include "supervisor.h"
#include "workspace.h"

/* Refuses, for COMMAND, a policy only an evaluation may run (commands.h,
 * session_prepare). Returns 0 or EXIT_USAGE, saying why. */
static int
session_policy_refused(const struct policy *pol, const char *command)
{
	char names[256];

	/* A session serves an agent: never with layers off, which only an
	 * evaluation may ask for (docs/layers.md). */
	if (policy_layers_off(pol) != 0) {
		log_error("refused: the policy switches layers off (%s): "
			  "`stockade %s` never runs such a policy (only "
			  "`stockade eval` or `stockade run "
			  "--unsafe-evaluation` do)",
		    job_layers_format(policy_layers_off(pol), names,
			sizeof(names)),
		    command);
		return EXIT_USAGE;
	}
	/* Nor with a bind given no Landlock rule, the other evaluation-only
	 * key ([filesystem] unsafe_ro_bind_no_landlock). */
	if (policy_unsafe_mount(pol) != NULL) {
		log_error("refused: the policy binds %s with "
			  "unsafe_ro_bind_no_landlock (no Landlock rule for "
			  "it): `stockade %s` never runs such a policy (only "
			  "`stockade eval` or `stockade run "
			  "--unsafe-evaluation` do)",
		    policy_unsafe_mount(pol)->target, command);
		return EXIT_USAGE;
	}
	return 0;
}

int
session_start_proxy(const struct policy *pol, struct egress_proxy *px)
{
	char err[512];
	int e;

	egress_proxy_init(px);
	if (!policy_has_network(pol))
		return 0;
	if ((e = egress_proxy_start(px, &pol->net.rules, NULL,
		 pol->net.resolver, err, sizeof(err))) < 0) {
		log_error("refused: the policy's [network] section allows "
			  "hosts, and %s",
		    err);
		return e == -ENOENT ? EXIT_SANDBOX : EXIT_REFUSED;
	}
	return 0;
}

int
session_prepare(const char *command, const char *policy_file,
    const char *workspace, struct policy *pol, struct workspace *ws,
    struct supervisor *sup, struct egress_proxy *px)
{
	char err[POLICY_ERR_MAX + 256];
	int rc;

	memset(pol, 0, sizeof(*pol));
	if ((rc = load_policy_or_complain(pol, policy_file)) != 0)
		return rc;
	if ((rc = session_policy_refused(pol, command)) != 0) {
		policy_clear(pol);
		return rc;
	}
	if (doctor_cached_verdict(err, sizeof(err)) < 0) {
		log_error("refused: %s", err);
		policy_clear(pol);
		return EXIT_REFUSED;
	}
	if ((rc = open_workspace_or_complain(ws, workspace)) != 0) {
		policy_clear(pol);
		return rc;
	}
	if (supervisor_init(sup, err, sizeof(err)) < 0) {
		log_error("%s", err);
		(void)workspace_close(ws, false);
		policy_clear(pol);
		return EXIT_SANDBOX;
	}
	if ((rc = session_start_proxy(pol, px)) != 0) {
		supervisor_free(sup);
		(void)workspace_close(ws, false);
		policy_clear(pol);
		return rc;
	}
	/* Sessions keep warm jails; `stockade run` does not. */
	sup->pool_size = pol->pool_size;
	return 0;
}

/* The reaper of the checkpoint store (start_ckpt_reaper), or -1. */
static pid_t reaper_pid = -1;
static int reaper_fd = -1;

/* At the broker's exit: ends the reaper (end of file on its pipe) and
 * waits for it. */
static void
end_ckpt_reaper(void)
{
	if (reaper_pid < 0)
		return;
	close(reaper_fd);
	while (waitpid(reaper_pid, NULL, 0) < 0 && errno == EINTR)
		;
	reaper_pid = -1;
}

/*
 * The reaper of CD's store: a child that holds the read end of a pipe
 * whose write end only the broker keeps (close-on-exec: no launcher
 * inherits it), and that, when the pipe reads end of file (the broker
 * gone, however it died: SIGKILL included), removes the store if its
 * name still names the directory made (same device and inode), then
 * exits. It takes no input but that end of file, ignores the signals a
 * terminal sends to the foreground group, and is forked before the
 * broker confines itself. A broker that ends normally has removed the
 * store already. Failing to start it costs only the cleanup after a
 * SIGKILL (warned).
 */
static void
start_ckpt_reaper(const struct ckpt_dir *cd)
{
	static const int quiet[] = {SIGINT, SIGQUIT, SIGHUP, SIGTERM, SIGTSTP,
	    SIGTTIN, SIGTTOU};
	struct stat made, now;
	char buf[1];
	int p[2];
	pid_t pid;

	if (fstat(cd->fd, &made) < 0 || pipe2(p, O_CLOEXEC) < 0) {
		log_warn("no reaper for the checkpoint store: %s",
		    strerror(errno));
		return;
	}
	if ((pid = fork()) < 0) {
		log_warn("no reaper for the checkpoint store: %s",
		    strerror(errno));
		close(p[0]);
		close(p[1]);
		return;
	}
	if (pid > 0) {
		close(p[0]);
		/* p[1] is held until the broker ends; at a normal end the
		 * broker closes it and reaps the reaper, so that no zombie
		 * of its is left to a subreaper (end_ckpt_reaper). */
		reaper_pid = pid;
		reaper_fd = p[1];
		if (atexit(end_ckpt_reaper) != 0)
			log_warn("the checkpoint store's reaper will be left "
				 "to init");
		return;
	}
	/* Nothing of the broker's but the pipe and $TMPDIR: no client's
	 * socket or stream is held open by the reaper. */
	if (dup2(p[0], 3) < 0 || dup2(cd->parent_fd, 4) < 0)
		_exit(1);
	closefrom(5);
	close(0);
	close(1);
	close(2);
	for (size_t i = 0; i < sizeof(quiet) / sizeof(quiet[0]); i++)
		signal(quiet[i], SIG_IGN);
	prctl(PR_SET_NAME, "stockade-reaper");
	while (read(3, buf, sizeof(buf)) < 0 && errno == EINTR)
		;
	if (fstatat(4, cd->name, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
	    now.st_dev == made.st_dev && now.st_ino == made.st_ino)
		(void)remove_tree_at(4, cd->name);
	_exit(0);
}

void
session_ckpt_dir(const struct policy *pol, struct ckpt_dir *cd)
{
	int e;

	ckpt_dir_clear(cd);
	if (pol->files.max_checkpoints == 0)
		return;
	if ((e = ckpt_dir_make(NULL, cd)) < 0)
		log_warn("no checkpoints: cannot make their store: %s",
		    strerror(-e));
	else
		start_ckpt_reaper(cd);
}

int
session_confine(struct supervisor *sup, const struct confine_rule *rules,
    size_t nrules)
{
	int e;

	if ((e = supervisor_use_spawner(sup)) < 0) {
		log_error("cannot start the launcher spawner: %s",
		    strerror(-e));
		return EXIT_SANDBOX;
	}
	return confine_or_complain(rules, nrules);
}

void
session_block_end_signals(sigset_t *waitmask)
{
	sigset_t block;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &block, waitmask);
	if (waitmask == NULL)
		return;
	sigdelset(waitmask, SIGINT);
	sigdelset(waitmask, SIGTERM);
	sigdelset(waitmask, SIGHUP);
}

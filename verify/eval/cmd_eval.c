/*
 * cmd_eval.c: `stockade eval layers | isolation | filter | corpus`
 * (issue 6; docs/evidence.md): the attack corpus run against
 * configurations of the jail, and the tables of what each layer stops.
 *
 * The eval runs every job through the real broker: it executes its own
 * binary as `stockade run --format json` (eval_run.h), so each job is
 * confined exactly as a user's would be, and a configuration with layers
 * off exists only through the evaluation switches of the policy
 * ([jail] unsafe_layers_off) and --unsafe-evaluation. The weakened
 * configurations run attacks on the host with the caller's ids, so they
 * are refused to root (without a user namespace the weakest would run
 * them as host root); `corpus` and `filter` run the full product only
 * and may run as root.
 *
 * Runs go --jobs at a time (threads; default 2), configuration after
 * configuration. One honeypot serves the whole eval; everything else is
 * made per run and removed after it.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

#include <jansson.h>

#include "commands.h"
#include "config.h"
#include "eval_corpus.h"
#include "eval_decoy.h"
#include "eval_filter.h"
#include "eval_honeypot.h"
#include "eval_run.h"
#include "eval_table.h"
#include "fsutil.h"
#include "log.h"
#include "policy.h"
#include "preflight.h"
#include "verify.h"

#ifndef STOCKADE_EVAL_ATTACKS_DIR
#define STOCKADE_EVAL_ATTACKS_DIR "tests/attacks"
#endif
#ifndef STOCKADE_EVAL_ATTACKS_SRC
#define STOCKADE_EVAL_ATTACKS_SRC "tests/attacks"
#endif
#ifndef STOCKADE_EVAL_DIR
#define STOCKADE_EVAL_DIR "tests/eval"
#endif

#define EXIT_FOUND 1            /* an attack succeeded where it must not */
#define MAX_JOBS 4

/* The eval policy's limits (docs/evidence.md, "The eval policy"). */
#define EVAL_WALL_MS 10000
#define EVAL_STDOUT_KB 64
static const char policy_limits[] =
	"[limits]\n"
	"wall_time_ms = 10000\n"
	"cpu_time_ms = 2000\n"
	"memory_mb = 256\n"
	"processes = 32\n"
	"file_size_mb = 64\n"
	"tmp_mb = 32\n"
	"stdout_kb = 64\n"
	"stderr_kb = 64\n"
	"[files]\n"
	"workspace_mb = 64\n";

#define ALL JOB_LAYERS_ALL
#define OFF_FROM(n) (JOB_LAYERS_ALL & ~(JOB_LAYER_BIT(n) - 1u))

/* None, then each layer added in the order of shared/result.h: column N
 * has layers 1..N on. */
static const struct eval_config layer_configs[EVAL_NLAYERS + 1] = {
	{"none", "none", ALL},
	{"limits", "+limits", OFF_FROM(JOB_LAYER_PROCESS_GROUP)},
	{"process_group", "+process_group", OFF_FROM(JOB_LAYER_SCRUBBED_ENV)},
	{"scrubbed_env", "+scrubbed_env", OFF_FROM(JOB_LAYER_PRIVATE_CWD)},
	{"private_cwd", "+private_cwd", OFF_FROM(JOB_LAYER_USER_NS)},
	{"user_ns", "+user_ns", OFF_FROM(JOB_LAYER_PID_NS)},
	{"pid_ns", "+pid_ns", OFF_FROM(JOB_LAYER_MOUNT_NS)},
	{"mount_ns", "+mount_ns", OFF_FROM(JOB_LAYER_NETWORK_NS)},
	{"network_ns", "+network_ns", OFF_FROM(JOB_LAYER_IPC_UTS)},
	{"ipc_uts", "+ipc_uts", OFF_FROM(JOB_LAYER_NO_TERMINAL)},
	{"no_terminal", "+no_terminal", OFF_FROM(JOB_LAYER_CAPS_NNP)},
	{"caps_nnp", "+caps_nnp", OFF_FROM(JOB_LAYER_LANDLOCK)},
	{"landlock", "+landlock", OFF_FROM(JOB_LAYER_SECCOMP)},
	{"seccomp", "+seccomp", 0},
};

/* Filesystem isolation is the mount namespace and Landlock; network
 * isolation the network namespace (with Landlock's TCP rules and the
 * abstract unix scope, which go with it: docs/layers.md). */
#define FS_ISOLATION (JOB_LAYER_BIT(JOB_LAYER_MOUNT_NS) | \
		      JOB_LAYER_BIT(JOB_LAYER_LANDLOCK))
#define NET_ISOLATION JOB_LAYER_BIT(JOB_LAYER_NETWORK_NS)
static const struct eval_config isolation_configs[4] = {
	{"neither", "neither", FS_ISOLATION | NET_ISOLATION},
	{"fs_only", "fs only", NET_ISOLATION},
	{"net_only", "net only", FS_ISOLATION},
	{"both", "both", 0},
};

static const struct eval_config full_config[1] = {
	{"full", "full product", 0},
};

/* The hostile programs of the filter evaluation bare (to show the harm
 * the filter let through is real), then in the full product. */
static const struct eval_config filter_configs[2] = {
	{"none", "no sandbox", JOB_LAYERS_ALL},
	{"full", "full product", 0},
};

/* ---- interruption ------------------------------------------------------- */

static volatile sig_atomic_t interrupted_by;

static void
on_interrupt(int sig)
{
	interrupted_by = sig;
}

static int
eval_interrupted(void)
{
	return interrupted_by;
}

/* ---- the runs, --jobs at a time ------------------------------------------ */

struct sched {
	pthread_mutex_t mu;
	const struct eval_ctx *ctx;
	const struct eval_matrix *m;
	char (*policy)[PATH_MAX];       /* one file per configuration */
	struct eval_verdict *v;         /* the matrix's verdicts */
	size_t next, total;
	size_t *done;                   /* finished runs per configuration */
	uint64_t marks[MAX_JOBS];       /* honeypot mark of each worker's run */
	pthread_cond_t cv;              /* a run ended */
	size_t in_flight;               /* runs going on */
	bool exclusive;                 /* one of them must run alone */
	int64_t t0;
	const char *what;               /* "layers", ... for progress */
};

struct worker {
	struct sched *s;
	size_t slot;
};

static int64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One configuration done: its counts on stderr. */
static void
progress(struct sched *s, size_t c)
{
	const struct eval_matrix *m = s->m;
	size_t ok = 0, bad = 0, err = 0;

	for (size_t a = 0; a < m->corpus->n; a++) {
		enum eval_outcome o = s->v[a * m->ncfg + c].outcome;

		ok += o == EVAL_STOPPED;
		bad += o == EVAL_SUCCEEDED;
		err += o == EVAL_ERROR || o == EVAL_NOT_RUN;
	}
	fprintf(stderr, "stockade: eval %s: %s: %zu stopped, %zu succeeded, "
		"%zu not run or failed (%.1f s)\n", s->what, m->cfg[c].title, ok,
		bad, err, (double)(mono_ms() - s->t0) / 1000.0);
}

/*
 * Whether the runs of CFG must go one at a time: with the limits on and
 * no user namespace, RLIMIT_NPROC counts every process of the eval's
 * user on the host (setrlimit(2)), another run's too, so that a fork
 * bomb next door would make a job hit its process limit. Alone, a run
 * shares the count only with the eval's own few processes, the same in
 * every run (the eval's user must run nothing else: docs/evidence.md).
 */
static bool
must_run_alone(const struct eval_config *cfg)
{
	return (cfg->layers_off & JOB_LAYER_BIT(JOB_LAYER_LIMITS)) == 0 &&
	       (cfg->layers_off & JOB_LAYER_BIT(JOB_LAYER_USER_NS)) != 0;
}

static void *
work(void *arg)
{
	struct worker *w = arg;
	struct sched *s = w->s;
	const struct eval_matrix *m = s->m;

	for (;;) {
		size_t i, a, c;
		uint64_t low = UINT64_MAX;

		bool alone;

		pthread_mutex_lock(&s->mu);
		/* A run that must be alone waits for the others to end;
		 * the others wait while it runs. */
		while (s->next < s->total && !eval_interrupted() &&
		       (s->exclusive ||
			(must_run_alone(&m->cfg[s->next / m->corpus->n]) &&
			 s->in_flight > 0)))
			pthread_cond_wait(&s->cv, &s->mu);
		if (s->next >= s->total || eval_interrupted()) {
			pthread_cond_broadcast(&s->cv);
			pthread_mutex_unlock(&s->mu);
			break;
		}
		i = s->next++;
		/* Configuration after configuration: a column is done
		 * before the next one begins (but for --jobs overlap). */
		c = i / m->corpus->n;
		a = i % m->corpus->n;
		alone = must_run_alone(&m->cfg[c]);
		s->in_flight++;
		s->exclusive = alone;
		s->marks[w->slot] = eval_honeypot_mark(s->ctx->hp);
		pthread_mutex_unlock(&s->mu);

		(void)eval_run(s->ctx, &m->corpus->v[a], s->policy[c],
			       m->cfg[c].layers_off != 0, (unsigned)i,
			       &s->v[a * m->ncfg + c]);

		pthread_mutex_lock(&s->mu);
		s->in_flight--;
		if (alone)
			s->exclusive = false;
		pthread_cond_broadcast(&s->cv);
		s->marks[w->slot] = UINT64_MAX;
		for (size_t k = 0; k < MAX_JOBS; k++)
			if (s->marks[k] < low)
				low = s->marks[k];
		if (++s->done[c] == m->corpus->n)
			progress(s, c);
		pthread_mutex_unlock(&s->mu);
		/* Records no run in flight can need any more. */
		eval_honeypot_forget(s->ctx->hp, low == UINT64_MAX ?
				     eval_honeypot_mark(s->ctx->hp) : low);
	}
	return NULL;
}

/* Runs every cell of M (its verdicts array) with JOBS workers. */
static int
run_matrix(const struct eval_ctx *ctx, struct eval_matrix *m,
	   struct eval_verdict *v, char (*policy)[PATH_MAX], unsigned jobs,
	   const char *what)
{
	struct sched s;
	struct worker w[MAX_JOBS];
	pthread_t t[MAX_JOBS];
	unsigned started = 0;

	memset(&s, 0, sizeof(s));
	pthread_mutex_init(&s.mu, NULL);
	pthread_cond_init(&s.cv, NULL);
	s.ctx = ctx;
	s.m = m;
	s.policy = policy;
	s.v = v;
	s.total = m->corpus->n * m->ncfg;
	s.done = calloc(m->ncfg, sizeof(*s.done));
	s.t0 = mono_ms();
	s.what = what;
	for (size_t k = 0; k < MAX_JOBS; k++)
		s.marks[k] = UINT64_MAX;
	if (s.done == NULL)
		return -ENOMEM;
	for (unsigned k = 0; k < jobs; k++) {
		w[k] = (struct worker){&s, k};
		if (pthread_create(&t[k], NULL, work, &w[k]) != 0)
			break;
		started++;
	}
	if (started == 0)
		work(&(struct worker){&s, 0});
	for (unsigned k = 0; k < started; k++)
		pthread_join(t[k], NULL);
	free(s.done);
	pthread_cond_destroy(&s.cv);
	pthread_mutex_destroy(&s.mu);
	return eval_interrupted() ? -EINTR : 0;
}

/* ---- set-up ------------------------------------------------------------- */

/*
 * Writes and checks the policy of configuration CFG; PATH gets a name
 * for it. The policy is a sealed memfd (memfd_create(2), F_SEAL_WRITE and
 * the rest: nobody can change it any more), named by its /proc/PID/fd
 * link and kept open for the whole evaluation. A file in the run
 * directory would not do: in the columns without a user namespace the
 * attacks run as the eval's own user and could rewrite the policies of
 * the later columns, the product's included (review of issue 6, F1).
 */
static int
write_policy(const char *base, const struct eval_config *cfg, char *path,
	     size_t size)
{
	int fd = -1;
	char off[512];
	char text[2048];
	char err[POLICY_ERR_MAX];
	struct policy p;
	int e;

	job_layers_format(cfg->layers_off, off, sizeof(off));
	snprintf(text, sizeof(text), "# stockade eval: configuration %s "
		 "(docs/evidence.md)\n%s%s%s%s", cfg->name, policy_limits,
		 off[0] != '\0' ? "[jail]\nunsafe_layers_off = " : "", off,
		 off[0] != '\0' ? "\n" : "");
	(void)base;
	fd = memfd_create("stockade-eval-policy", MFD_CLOEXEC |
						    MFD_ALLOW_SEALING);
	e = fd < 0 ? -errno : write_all(fd, text, strlen(text));
	if (e == 0 && fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK |
					      F_SEAL_GROW | F_SEAL_WRITE) < 0)
		e = -errno;
	if (e < 0) {
		log_error("eval: the policy of configuration %s: %s",
			  cfg->name, strerror(-e));
		if (fd >= 0)
			close(fd);
		return EXIT_SANDBOX;
	}
	/* Kept open until the eval exits: the path names it. */
	snprintf(path, size, "/proc/%d/fd/%d", (int)getpid(), fd);
	memset(&p, 0, sizeof(p));
	if (policy_load_file(&p, path, err, sizeof(err)) < 0) {
		log_error("eval: the policy of configuration %s is refused: %s",
			  cfg->name, err);
		log_error("eval: this stockade cannot switch layers off for an "
			  "evaluation ([jail] unsafe_layers_off)");
		return EXIT_SANDBOX;
	}
	policy_clear(&p);
	return 0;
}

/* This program, stockade-eval, for the decoys. */
static int
self_path(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);

	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: stockade eval layers|isolation|corpus [--attacks DIR]\n"
		"                     [--attacks-src DIR] [--only NN]...\n"
		"                     [--json FILE] [--jobs N] [--keep]\n"
		"       stockade eval filter [--eval-dir DIR] [--only NAME]...\n"
		"                     [--json FILE] [--jobs N] [--keep]\n"
		"layers: every attack under 14 configurations, from no layer to\n"
		"  the full product, one layer added at a time; isolation: the\n"
		"  exfiltration attacks without/with filesystem and network\n"
		"  isolation; corpus: every attack against the full product\n"
		"  (exit 1 if one succeeds); filter: a code filter against the\n"
		"  sandbox (docs/evidence.md). Markdown on stdout.\n"
		"defaults: --attacks %s\n"
		"          --attacks-src %s\n"
		"          --eval-dir %s\n",
		STOCKADE_EVAL_ATTACKS_DIR, STOCKADE_EVAL_ATTACKS_SRC,
		STOCKADE_EVAL_DIR);
}

struct opts {
	const char *sub;
	const char *attacks, *attacks_src, *eval_dir, *json;
	char **only;
	size_t nonly;
	unsigned jobs;
	bool keep;
};

static int
parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{"attacks", required_argument, NULL, 'a'},
		{"attacks-src", required_argument, NULL, 's'},
		{"eval-dir", required_argument, NULL, 'e'},
		{"json", required_argument, NULL, 'J'},
		{"only", required_argument, NULL, 'o'},
		{"jobs", required_argument, NULL, 'j'},
		{"keep", no_argument, NULL, 'k'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	o->attacks = STOCKADE_EVAL_ATTACKS_DIR;
	o->attacks_src = STOCKADE_EVAL_ATTACKS_SRC;
	o->eval_dir = STOCKADE_EVAL_DIR;
	o->jobs = 2;
	o->only = calloc((size_t)argc, sizeof(*o->only));
	if (o->only == NULL)
		return EXIT_SANDBOX;
	optind = 2;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		char *end;
		unsigned long n;

		switch (c) {
		case 'a': o->attacks = optarg; break;
		case 's': o->attacks_src = optarg; break;
		case 'e': o->eval_dir = optarg; break;
		case 'J': o->json = optarg; break;
		case 'o': o->only[o->nonly++] = optarg; break;
		case 'k': o->keep = true; break;
		case 'j':
			n = strtoul(optarg, &end, 10);
			if (*end != '\0' || n < 1 || n > MAX_JOBS) {
				log_error("eval: --jobs takes 1 to %d",
					  MAX_JOBS);
				return EXIT_USAGE;
			}
			o->jobs = (unsigned)n;
			break;
		case 'h':
			usage(stdout);
			return -1;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	return 0;
}

/* The command that regenerates the table, for its first line. */
static void
command_line(const struct opts *o, char *buf, size_t size)
{
	size_t n = (size_t)snprintf(buf, size, "stockade eval %s", o->sub);

	for (size_t i = 0; i < o->nonly && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, " --only %s",
				      o->only[i]);
}

/* Writes O to F, opened as FILE (JSON, indented, then a newline). */
static int
write_json(FILE *f, const char *file, json_t *o)
{
	if (json_dumpf(o, f, JSON_INDENT(2) | JSON_SORT_KEYS |
		       JSON_ENSURE_ASCII) < 0 || fputc('\n', f) == EOF ||
	    fflush(f) != 0) {
		log_error("eval: cannot write %s", file);
		return EXIT_SANDBOX;
	}
	return 0;
}

int
cmd_eval(int argc, char **argv)
{
	struct opts o;
	struct eval_corpus corpus = {NULL, 0};
	struct eval_honeypot *hp = NULL;
	struct eval_matrix m;
	struct eval_ctx ctx;
	struct eval_verdict *v = NULL;
	char (*policy)[PATH_MAX] = NULL;
	char self[PATH_MAX], broker[PATH_MAX], tried[3 * PATH_MAX + 64];
	char base[] = "/tmp/stockade-eval-XXXXXX";
	char err[1024], command[512];
	const char *home = getenv("HOME"), *path = getenv("PATH");
	struct sigaction sa;
	json_t *jo = NULL;
	FILE *jf = NULL;
	bool made_base = false;
	int rc;

	if (argc >= 2 && strcmp(argv[1], "__decoy") == 0)
		return eval_decoy_main(argc - 1, argv + 1);
	memset(&o, 0, sizeof(o));
	memset(&m, 0, sizeof(m));
	if (argc < 2 || argv[1][0] == '-') {
		if (argc >= 2 && (strcmp(argv[1], "--help") == 0 ||
				  strcmp(argv[1], "-h") == 0)) {
			usage(stdout);
			return 0;
		}
		usage(stderr);
		return EXIT_USAGE;
	}
	o.sub = argv[1];
	if (strcmp(o.sub, "layers") == 0) {
		m.kind = EVAL_KIND_LAYERS;
		m.cfg = layer_configs;
		m.ncfg = EVAL_NLAYERS + 1;
	} else if (strcmp(o.sub, "isolation") == 0) {
		m.kind = EVAL_KIND_ISOLATION;
		m.cfg = isolation_configs;
		m.ncfg = 4;
	} else if (strcmp(o.sub, "corpus") == 0) {
		m.kind = EVAL_KIND_CORPUS;
		m.cfg = full_config;
		m.ncfg = 1;
	} else if (strcmp(o.sub, "filter") == 0) {
		/* Bare too, but never as root: see below. */
		m.kind = EVAL_KIND_FILTER;
		m.cfg = geteuid() != 0 ? filter_configs : full_config;
		m.ncfg = geteuid() != 0 ? 2 : 1;
	} else {
		log_error("eval: unknown evaluation \"%s\"", o.sub);
		usage(stderr);
		return EXIT_USAGE;
	}
	if ((rc = parse(argc, argv, &o)) != 0) {
		free(o.only);
		return rc < 0 ? 0 : rc;
	}
	command_line(&o, command, sizeof(command));
	m.command = command;

	/* Weakened jails run attacks on this host with our ids: never
	 * root's (without a user namespace the weakest would be host
	 * root). */
	if (geteuid() == 0 && (m.kind == EVAL_KIND_LAYERS ||
			       m.kind == EVAL_KIND_ISOLATION)) {
		log_error("eval %s: refused as root: its weakened "
			  "configurations would run attacks on this host with "
			  "root's ids. Run it as an unprivileged user, for "
			  "example:\n  setpriv --reuid=65534 --regid=65534 "
			  "--clear-groups %s eval %s\n(that user must be able "
			  "to read the stockade binaries and the attacks: "
			  "copy them under /tmp when they sit in a directory "
			  "others may not enter)", o.sub,
			  verify_find_broker(broker, sizeof(broker), NULL,
					     0) == 0 ? broker : "stockade",
			  o.sub);
		free(o.only);
		return EXIT_REFUSED;
	}
	if (self_path(self, sizeof(self)) < 0) {
		log_error("eval: /proc/self/exe: %s", strerror(errno));
		free(o.only);
		return EXIT_SANDBOX;
	}
	if (verify_find_broker(broker, sizeof(broker), tried,
			       sizeof(tried)) < 0) {
		log_error("eval: no stockade to evaluate in %s; run `stockade "
			  "eval`", tried);
		free(o.only);
		return EXIT_SANDBOX;
	}
	if (m.kind == EVAL_KIND_FILTER) {
		char dir[PATH_MAX];

		snprintf(dir, sizeof(dir), "%s/hostile", o.eval_dir);
		rc = eval_corpus_load(&corpus, dir, NULL, true, o.only,
				      o.nonly, err, sizeof(err));
	} else {
		rc = eval_corpus_load(&corpus, o.attacks, o.attacks_src, false,
				      o.only, o.nonly, err, sizeof(err));
	}
	if (rc < 0) {
		log_error("eval: %s", err);
		free(o.only);
		return EXIT_USAGE;
	}
	if (m.kind == EVAL_KIND_ISOLATION)
		eval_corpus_keep_exfil(&corpus);
	/* Opened now: a minute of runs is not lost to a typo. */
	if (o.json != NULL && (jf = fopen(o.json, "we")) == NULL) {
		log_error("eval: %s: %s", o.json, strerror(errno));
		rc = EXIT_USAGE;
		goto out;
	}
	if (corpus.n == 0) {
		log_error("eval: no program to run in %s", m.kind ==
			  EVAL_KIND_FILTER ? o.eval_dir : o.attacks);
		rc = EXIT_USAGE;
		goto out;
	}
	m.corpus = &corpus;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_interrupt;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	if (mkdtemp(base) == NULL || chmod(base, 0711) < 0) {
		log_error("eval: %s: %s", base, strerror(errno));
		rc = EXIT_SANDBOX;
		goto out;
	}
	made_base = true;
	policy = calloc(m.ncfg, sizeof(*policy));
	v = calloc(corpus.n * m.ncfg, sizeof(*v));
	if (policy == NULL || v == NULL) {
		log_error("eval: out of memory");
		rc = EXIT_SANDBOX;
		goto out;
	}
	for (size_t c = 0; c < m.ncfg; c++)
		if ((rc = write_policy(base, &m.cfg[c], policy[c],
				       sizeof(policy[c]))) != 0)
			goto out;
	if (eval_honeypot_start(&hp, err, sizeof(err)) < 0) {
		log_error("eval: %s", err);
		rc = EXIT_SANDBOX;
		goto out;
	}
	memset(&ctx, 0, sizeof(ctx));
	ctx.self = broker;
	ctx.decoy = self;
	ctx.base = base;
	ctx.hp = hp;
	ctx.user_home = home != NULL && home[0] == '/' ? home : NULL;
	ctx.path_env = path != NULL ? path : "/usr/local/bin:/usr/bin:/bin";
	ctx.stdout_cap = (uint64_t)EVAL_STDOUT_KB << 10;
	ctx.wall_ms = EVAL_WALL_MS;
	ctx.keep = o.keep;
	ctx.interrupted = eval_interrupted;
	m.v = v;
	if (run_matrix(&ctx, &m, v, policy, o.jobs, o.sub) < 0) {
		log_error("eval: interrupted");
		rc = 128 + (int)interrupted_by;
		goto out;
	}

	if (m.kind == EVAL_KIND_FILTER) {
		rc = eval_filter_report(o.eval_dir, &m, stdout, &jo);
	} else {
		if (eval_print_markdown(stdout, &m) < 0) {
			log_error("eval: cannot write the table");
			rc = EXIT_SANDBOX;
			goto out;
		}
		jo = o.json != NULL ? eval_matrix_json(&m) : NULL;
		rc = 0;
		/* The full product must stop everything: its column is the
		 * last one. */
		for (size_t a = 0; a < corpus.n; a++) {
			const struct eval_verdict *last =
				&v[a * m.ncfg + m.ncfg - 1];

			if (last->outcome == EVAL_SUCCEEDED)
				rc = EXIT_FOUND;
			else if ((last->outcome == EVAL_ERROR ||
				  last->outcome == EVAL_NOT_RUN) && rc == 0)
				rc = EXIT_SANDBOX;
		}
	}
	if (o.json != NULL && jo == NULL && rc != EXIT_SANDBOX) {
		log_error("eval: out of memory");
		rc = EXIT_SANDBOX;
	} else if (jf != NULL && jo != NULL &&
		   write_json(jf, o.json, jo) != 0) {
		rc = EXIT_SANDBOX;
	}
out:
	if (jf != NULL && fclose(jf) != 0 && rc == 0) {
		log_error("eval: %s: %s", o.json, strerror(errno));
		rc = EXIT_SANDBOX;
	}
	json_decref(jo);
	eval_honeypot_stop(hp);
	if (made_base && !o.keep) {
		_cleanup_close_ int tmp = open("/tmp", O_PATH | O_DIRECTORY |
					       O_CLOEXEC);

		if (tmp >= 0)
			(void)remove_tree_at(tmp, base + 5);
	} else if (made_base) {
		fprintf(stderr, "stockade: eval: kept %s\n", base);
	}
	free(policy);
	free(v);
	eval_corpus_free(&corpus);
	free(o.only);
	return rc;
}

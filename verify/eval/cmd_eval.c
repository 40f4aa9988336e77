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
 * them as host root): `layers` refuses root; `isolation`, `corpus` and
 * `filter` run only the full product as root (isolation's "both" and
 * "fs + allow-list" columns).
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
#include "eval_dns.h"
#include "eval_filter.h"
#include "eval_honeypot.h"
#include "eval_run.h"
#include "eval_sched.h"
#include "eval_table.h"
#include "fsutil.h"
#include "log.h"
#include "policy.h"
#include "preflight.h"
#include "verify.h"

#ifndef STOCKADE_EVAL_ATTACKS_DIR
#define STOCKADE_EVAL_ATTACKS_DIR "tests/verify/eval/attacks"
#endif
#ifndef STOCKADE_EVAL_ATTACKS_SRC
#define STOCKADE_EVAL_ATTACKS_SRC "tests/verify/eval/attacks"
#endif
#ifndef STOCKADE_EVAL_DIR
#define STOCKADE_EVAL_DIR "tests/verify/eval/codefilter"
#endif

#define EXIT_FOUND 1 /* an attack succeeded where it must not */
#define MAX_JOBS EVAL_MAX_JOBS

/* The eval policy's limits (docs/evidence.md, "The eval policy"). */
#define EVAL_WALL_MS 10000
#define EVAL_STDOUT_KB 64
static const char policy_limits[] = "[limits]\n"
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

/* ---- set-up ------------------------------------------------------------- */

/*
 * The [network] section of an allow-list configuration into OUT (SIZE
 * bytes). Nothing reaches beyond loopback: the resolver is the
 * honeypot's UDP socket on 127.0.0.1 (eval_dns.h), which answers the
 * names below with loopback or link-local addresses and every other
 * name with NXDOMAIN, so that the proxy asks no DNS server of the host;
 * the one address opened is the eval's index, at the honeypot's TCP
 * port. The names are the tricks of attacks 77 to 79 (issue 25): a
 * wildcard whose subdomains carry data out in their queries, a name on
 * a private address, a name on the index for a mismatched SNI.
 */
static void
allow_list_text(const struct eval_honeypot *hp, char *out, size_t size)
{
	unsigned tcp = eval_honeypot_tcp_port(hp);

	snprintf(out, size,
	    "[network]\nresolver = 127.0.0.1:%u\n"
	    "allow = *.%s\nallow = %s:%u\nallow = %s:%u\n"
	    "allow = %s:%u\nallow_address = %s:%u\n",
	    (unsigned)eval_honeypot_udp_port(hp), EVAL_DNS_EXFIL,
	    EVAL_DNS_REBIND, tcp, EVAL_DNS_METADATA, tcp, EVAL_DNS_FRONT, tcp,
	    EVAL_INDEX_ADDR, tcp);
}

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
write_policy(const struct eval_config *cfg, const struct eval_honeypot *hp,
    char *path, size_t size)
{
	int fd = -1;
	char off[512], net[512] = "";
	char text[2048];
	char err[POLICY_ERR_MAX];
	struct policy p;
	int e;

	job_layers_format(cfg->layers_off, off, sizeof(off));
	if (cfg->allow_list)
		allow_list_text(hp, net, sizeof(net));
	snprintf(text, sizeof(text),
	    "# stockade eval: configuration %s "
	    "(docs/evidence.md)\n%s%s%s%s%s",
	    cfg->name, policy_limits,
	    off[0] != '\0' ? "[jail]\nunsafe_layers_off = " : "", off,
	    off[0] != '\0' ? "\n" : "", net);
	fd = memfd_create("stockade-eval-policy",
	    MFD_CLOEXEC | MFD_ALLOW_SEALING);
	e = fd < 0 ? -errno : write_all(fd, text, strlen(text));
	if (e == 0 &&
	    fcntl(fd, F_ADD_SEALS,
		F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) < 0)
		e = -errno;
	if (e < 0) {
		log_error("eval: the policy of configuration %s: %s", cfg->name,
		    strerror(-e));
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
	    "  isolation, then with a [network] allow-list of the eval's\n"
	    "  own index and names its own resolver answers (as root: the\n"
	    "  columns with every layer on);\n"
	    "  corpus: every attack against the full product\n"
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
		case 'a':
			o->attacks = optarg;
			break;
		case 's':
			o->attacks_src = optarg;
			break;
		case 'e':
			o->eval_dir = optarg;
			break;
		case 'J':
			o->json = optarg;
			break;
		case 'o':
			o->only[o->nonly++] = optarg;
			break;
		case 'k':
			o->keep = true;
			break;
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
	if (json_dumpf(o, f,
		JSON_INDENT(2) | JSON_SORT_KEYS | JSON_ENSURE_ASCII) < 0 ||
	    fputc('\n', f) == EOF || fflush(f) != 0) {
		log_error("eval: cannot write %s", file);
		return EXIT_SANDBOX;
	}
	return 0;
}

/*
 * The arguments of `stockade eval` (ARGC, ARGV, ARGV[1] the evaluation)
 * into O and M, with M->command pointing into COMMAND (SIZE bytes, the
 * caller's). Returns 0 to go on (O->only then owned by the caller), -1
 * when the command is done with exit 0 (--help), or the exit status of
 * a usage error or of root refused a weakened evaluation (O->only
 * freed).
 */
static int
eval_args(int argc, char **argv, struct opts *o, struct eval_matrix *m,
    char *command, size_t size)
{
	char broker[PATH_MAX];
	int rc;

	if (argc < 2 || argv[1][0] == '-') {
		if (argc >= 2 &&
		    (strcmp(argv[1], "--help") == 0 ||
			strcmp(argv[1], "-h") == 0)) {
			usage(stdout);
			return -1;
		}
		usage(stderr);
		return EXIT_USAGE;
	}
	o->sub = argv[1];
	if (eval_select_matrix(o->sub, m) < 0) {
		log_error("eval: unknown evaluation \"%s\"", o->sub);
		usage(stderr);
		return EXIT_USAGE;
	}
	if ((rc = parse(argc, argv, o)) != 0) {
		free(o->only);
		return rc;
	}
	command_line(o, command, size);
	m->command = command;

	/* Weakened jails run attacks on this host with our ids: never
	 * root's (without a user namespace the weakest would be host
	 * root). */
	if (geteuid() == 0 && m->kind == EVAL_KIND_LAYERS) {
		log_error("eval %s: refused as root: its weakened "
			  "configurations would run attacks on this host with "
			  "root's ids. Run it as an unprivileged user, for "
			  "example:\n  setpriv --reuid=65534 --regid=65534 "
			  "--clear-groups %s eval %s\n(that user must be able "
			  "to read the stockade binaries and the attacks: "
			  "copy them under /tmp when they sit in a directory "
			  "others may not enter)",
		    o->sub,
		    verify_find_broker(broker, sizeof(broker), NULL, 0) == 0
			? broker
			: "stockade",
		    o->sub);
		free(o->only);
		return EXIT_REFUSED;
	}
	return 0;
}

/*
 * The programs and the corpus of the eval O describes into SELF (this
 * program, for the decoys), BROKER (the stockade to evaluate), both
 * PATH_MAX bytes, and CORPUS (the caller frees it with eval_corpus_free
 * when this returns 0). Returns 0, or an exit status with the error
 * logged (CORPUS then empty).
 */
static int
find_programs(const struct opts *o, const struct eval_matrix *m, char *self,
    char *broker, struct eval_corpus *corpus)
{
	char tried[3 * PATH_MAX + 64], err[1024];
	int rc;

	if (self_path(self, PATH_MAX) < 0) {
		log_error("eval: /proc/self/exe: %s", strerror(errno));
		return EXIT_SANDBOX;
	}
	if (verify_find_broker(broker, PATH_MAX, tried, sizeof(tried)) < 0) {
		log_error("eval: no stockade to evaluate in %s; run `stockade "
			  "eval`",
		    tried);
		return EXIT_SANDBOX;
	}
	if (m->kind == EVAL_KIND_FILTER) {
		char dir[PATH_MAX];

		snprintf(dir, sizeof(dir), "%s/hostile", o->eval_dir);
		rc = eval_corpus_load(corpus, dir, NULL, true, o->only,
		    o->nonly, err, sizeof(err));
	} else {
		rc = eval_corpus_load(corpus, o->attacks, o->attacks_src, false,
		    o->only, o->nonly, err, sizeof(err));
	}
	if (rc < 0) {
		log_error("eval: %s", err);
		return EXIT_USAGE;
	}
	if (m->kind == EVAL_KIND_ISOLATION)
		eval_corpus_keep_exfil(corpus);
	return 0;
}

/* SIGINT, SIGTERM and SIGHUP stop the eval (eval_interrupted). */
static void
catch_interrupts(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_interrupt;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/*
 * What every run of the eval O describes shares, into CTX: the strings
 * BROKER, SELF and BASE and the honeypot HP are borrowed, as are $HOME
 * and $PATH.
 */
static void
eval_ctx_init(struct eval_ctx *ctx, const struct opts *o, const char *broker,
    const char *self, const char *base, struct eval_honeypot *hp)
{
	const char *home = getenv("HOME"), *path = getenv("PATH");

	memset(ctx, 0, sizeof(*ctx));
	ctx->self = broker;
	ctx->decoy = self;
	ctx->base = base;
	ctx->hp = hp;
	ctx->user_home = home != NULL && home[0] == '/' ? home : NULL;
	ctx->path_env = path != NULL ? path : "/usr/local/bin:/usr/bin:/bin";
	ctx->stdout_cap = (uint64_t)EVAL_STDOUT_KB << 10;
	ctx->wall_ms = EVAL_WALL_MS;
	ctx->keep = o->keep;
	ctx->interrupted = eval_interrupted;
}

/*
 * The full product must stop everything: its columns are those with no
 * layer off, with or without an allow-list (isolation's "both" and "fs +
 * allow-list", the layer table's last); under an allow-list, everything
 * but what an attack declares the allowed host lets out by design
 * ("by-design: allowed-host-exit"; issue 25). 0, EXIT_FOUND or
 * EXIT_SANDBOX (such a run failed or was not run).
 */
static int
product_status(const struct eval_matrix *m)
{
	int rc = 0;

	for (size_t a = 0; a < m->corpus->n; a++) {
		const char *by = eval_attack_get(&m->corpus->v[a], "by-design");
		bool exit_ok = by != NULL &&
		    strcmp(by, "allowed-host-exit") == 0;

		for (size_t c = 0; c < m->ncfg; c++) {
			const struct eval_verdict *v = &m->v[a * m->ncfg + c];

			if (m->cfg[c].layers_off != 0 ||
			    (m->cfg[c].allow_list && exit_ok))
				continue;
			if (v->outcome == EVAL_SUCCEEDED)
				rc = EXIT_FOUND;
			else if ((v->outcome == EVAL_ERROR ||
				     v->outcome == EVAL_NOT_RUN) &&
			    rc == 0)
				rc = EXIT_SANDBOX;
		}
	}
	return rc;
}

/*
 * The report of the runs of M: the filter's, or the table on stdout with
 * the JSON written to JF (opened on O->json; NULL: none). Returns the
 * command's exit status: 0, EXIT_FOUND when the full product let an
 * attack succeed, EXIT_SANDBOX when one of its runs failed or a write
 * did. *JO gets the JSON (the caller's, json_decref).
 */
static int
eval_report(const struct opts *o, const struct eval_matrix *m, FILE *jf,
    json_t **jo)
{
	int rc;

	if (m->kind == EVAL_KIND_FILTER) {
		rc = eval_filter_report(o->eval_dir, m, stdout, jo);
	} else {
		if (eval_print_markdown(stdout, m) < 0) {
			log_error("eval: cannot write the table");
			return EXIT_SANDBOX;
		}
		*jo = o->json != NULL ? eval_matrix_json(m) : NULL;
		rc = 0;
		rc = product_status(m);
	}
	if (o->json != NULL && *jo == NULL && rc != EXIT_SANDBOX) {
		log_error("eval: out of memory");
		rc = EXIT_SANDBOX;
	} else if (jf != NULL && *jo != NULL &&
	    write_json(jf, o->json, *jo) != 0) {
		rc = EXIT_SANDBOX;
	}
	return rc;
}

/*
 * Before the runs: opens O->json into *JF (left NULL when none is
 * asked; the caller closes it), so that a minute of runs is not lost to
 * a typo, and refuses an empty CORPUS (M's kind says where it was
 * looked for). Returns 0, or EXIT_USAGE with the error logged.
 */
static int
open_outputs(const struct opts *o, const struct eval_matrix *m,
    const struct eval_corpus *corpus, FILE **jf)
{
	if (o->json != NULL && (*jf = fopen(o->json, "we")) == NULL) {
		log_error("eval: %s: %s", o->json, strerror(errno));
		return EXIT_USAGE;
	}
	if (corpus->n == 0) {
		log_error("eval: no program to run in %s",
		    m->kind == EVAL_KIND_FILTER ? o->eval_dir : o->attacks);
		return EXIT_USAGE;
	}
	return 0;
}

/*
 * After the runs: the eval's directory BASE (made by mkdtemp under
 * /tmp) removed with all it holds, or, when KEEP, kept and named on
 * stderr.
 */
static void
remove_base(const char *base, bool keep)
{
	if (!keep) {
		_cleanup_close_ int tmp = open("/tmp",
		    O_PATH | O_DIRECTORY | O_CLOEXEC);

		if (tmp >= 0)
			(void)remove_tree_at(tmp, base + 5);
	} else {
		fprintf(stderr, "stockade: eval: kept %s\n", base);
	}
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
	char(*policy)[PATH_MAX] = NULL;
	char self[PATH_MAX], broker[PATH_MAX];
	char base[] = "/tmp/stockade-eval-XXXXXX";
	char err[1024], command[512];
	json_t *jo = NULL;
	FILE *jf = NULL;
	bool made_base = false;
	int rc;

	if (argc >= 2 && strcmp(argv[1], "__decoy") == 0)
		return eval_decoy_main(argc - 1, argv + 1);
	memset(&o, 0, sizeof(o));
	memset(&m, 0, sizeof(m));
	if ((rc = eval_args(argc, argv, &o, &m, command, sizeof(command))) != 0)
		return rc < 0 ? 0 : rc;
	if ((rc = find_programs(&o, &m, self, broker, &corpus)) != 0) {
		free(o.only);
		return rc;
	}
	if ((rc = open_outputs(&o, &m, &corpus, &jf)) != 0)
		goto out;
	m.corpus = &corpus;
	catch_interrupts();

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
	if (eval_honeypot_start(&hp, err, sizeof(err)) < 0) {
		log_error("eval: %s", err);
		rc = EXIT_SANDBOX;
		goto out;
	}
	for (size_t c = 0; c < m.ncfg; c++)
		if ((rc = write_policy(&m.cfg[c], hp, policy[c],
			 sizeof(policy[c]))) != 0)
			goto out;
	eval_ctx_init(&ctx, &o, broker, self, base, hp);
	m.v = v;
	if (eval_sched_run(&ctx, &m, v, policy, o.jobs, o.sub) < 0) {
		log_error("eval: interrupted");
		rc = 128 + (int)interrupted_by;
		goto out;
	}
	rc = eval_report(&o, &m, jf, &jo);
out:
	if (jf != NULL && fclose(jf) != 0 && rc == 0) {
		log_error("eval: %s: %s", o.json, strerror(errno));
		rc = EXIT_SANDBOX;
	}
	json_decref(jo);
	eval_honeypot_stop(hp);
	if (made_base)
		remove_base(base, o.keep);
	free(policy);
	free(v);
	eval_corpus_free(&corpus);
	free(o.only);
	return rc;
}

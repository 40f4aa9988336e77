/*
 * test_policy.c: the policy language (policy/policy.c).
 *
 * Fixtures live in tests/policy/: valid-*.ini load, invalid-*.ini fail with
 * the exact message asserted below, one test each (style.md rule 17). Paths
 * are built from STOCKADE_SOURCE_ROOT, which tests/meson.build sets.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy.h"
#include "policy_fixture.h"

#define MIB (UINT64_C(1024) * 1024)

static void
assert_limits_eq(const struct job_limits *a, const struct job_limits *b)
{
	cr_assert_eq(a->wall_ms, b->wall_ms);
	cr_assert_eq(a->cpu_ms, b->cpu_ms);
	cr_assert_eq(a->memory_bytes, b->memory_bytes);
	cr_assert_eq(a->tmp_bytes, b->tmp_bytes);
	cr_assert_eq(a->home_bytes, b->home_bytes);
	cr_assert_eq(a->fsize_bytes, b->fsize_bytes);
	cr_assert_eq(a->stdout_bytes, b->stdout_bytes);
	cr_assert_eq(a->stderr_bytes, b->stderr_bytes);
	cr_assert_eq(a->nofile, b->nofile);
	cr_assert_eq(a->nproc, b->nproc);
}

static void
assert_env_eq(const struct policy *a, const struct policy *b)
{
	size_t i;

	cr_assert_eq(a->nenv, b->nenv);
	for (i = 0; i < a->nenv; i++)
		cr_assert_str_eq(a->env[i], b->env[i]);
}

static void
assert_mounts_eq(const struct policy *a, const struct policy *b)
{
	size_t i;

	cr_assert_eq(a->nmounts, b->nmounts);
	for (i = 0; i < a->nmounts; i++) {
		cr_assert_eq(a->mounts[i].kind, b->mounts[i].kind);
		cr_assert_str_eq(a->mounts[i].source, b->mounts[i].source);
		cr_assert_str_eq(a->mounts[i].target, b->mounts[i].target);
	}
}

static void
assert_jail_eq(const struct policy *a, const struct policy *b)
{
	cr_assert_str_eq(a->hostname, b->hostname);
	cr_assert_str_eq(a->user, b->user);
	cr_assert_str_eq(a->home, b->home);
	cr_assert_eq(a->uid, b->uid);
	cr_assert_eq(a->gid, b->gid);
	cr_assert_eq(a->unsafe_no_seccomp, b->unsafe_no_seccomp);
}

static void
assert_files_eq(const struct fs_quota *a, const struct fs_quota *b)
{
	cr_assert_eq(a->file_bytes, b->file_bytes);
	cr_assert_eq(a->workspace_bytes, b->workspace_bytes);
	cr_assert_eq(a->max_files, b->max_files);
	cr_assert_eq(a->max_path, b->max_path);
	cr_assert_eq(a->max_depth, b->max_depth);
	cr_assert_eq(a->mode_mask, b->mode_mask);
	cr_assert_eq(a->allow_hardlinks, b->allow_hardlinks);
	cr_assert_eq(a->inline_bytes, b->inline_bytes);
}

/* Equal in everything but the name. */
static void
assert_policy_eq(const struct policy *a, const struct policy *b)
{
	assert_net_eq(&a->net, &b->net);
	assert_wb_eq(&a->writeback, &b->writeback);
	cr_assert_eq(a->commit, b->commit);
	assert_limits_eq(&a->limits, &b->limits);
	assert_env_eq(a, b);
	assert_mounts_eq(a, b);
	assert_jail_eq(a, b);
	assert_files_eq(&a->files, &b->files);
}

/* policy_format(P) as a string the caller frees. */
static char *
format(const struct policy *p)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int r;

	cr_assert_not_null(f);
	r = policy_format(p, f);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(r, 0, "policy_format: %d", r);
	cr_assert_eq(strlen(text), len);
	return text;
}

/*
 * Formats P, loads the text back under P's name, expects an equal policy,
 * and formats that to the same text.
 */
static void
assert_round_trip(const struct policy *p)
{
	char err[POLICY_ERR_MAX];
	struct policy q;
	char *text, *again;
	int r;

	text = format(p);
	memset(&q, 0, sizeof(q));
	r = policy_load_string(&q, text, p->name, err, sizeof(err));
	cr_assert_eq(r, 0, "%s\n%s", err, text);
	cr_assert_str_eq(q.name, p->name);
	assert_policy_eq(p, &q);
	again = format(&q);
	cr_assert_str_eq(again, text);
	free(again);
	free(text);
	policy_clear(&q);
}

static bool
has_env(const struct policy *p, const char *entry)
{
	size_t i;

	for (i = 0; i < p->nenv; i++)
		if (strcmp(p->env[i], entry) == 0)
			return true;
	return false;
}

/* ---- The default -------------------------------------------------------- */

Test(default_policy, embedded_text_is_default_ini)
{
	char *path, *text = NULL;
	size_t len = 0, cap = 0;
	FILE *f;

	cr_assert(asprintf(&path, "%s/policy/default.ini", source_root()) > 0);
	f = fopen(path, "rb");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	for (;;) {
		if (len == cap) {
			cap = cap ? 2 * cap : 4096;
			text = realloc(text, cap);
			cr_assert_not_null(text);
		}
		size_t n = fread(text + len, 1, cap - len, f);
		if (n == 0)
			break;
		len += n;
	}
	cr_assert_eq(ferror(f), 0);
	fclose(f);
	cr_assert_eq(strlen(policy_default_text), len,
	    "embedded %zu bytes, %s %zu: rebuild", strlen(policy_default_text),
	    path, len);
	cr_assert_eq(memcmp(policy_default_text, text, len), 0);
	free(text);
	free(path);
}

Test(default_policy, values)
{
	struct policy p;

	load_default(&p);
	cr_assert_str_eq(p.name, "<default>");
	cr_assert_eq(p.limits.wall_ms, 30000);
	cr_assert_eq(p.limits.cpu_ms, 60000);
	cr_assert_eq(p.limits.memory_bytes, 1024 * MIB);
	cr_assert_eq(p.limits.nproc, 64);
	cr_assert_eq(p.limits.fsize_bytes, 64 * MIB);
	cr_assert_eq(p.limits.nofile, 256);
	cr_assert_eq(p.limits.tmp_bytes, 64 * MIB);
	cr_assert_eq(p.limits.home_bytes, 16 * MIB);
	cr_assert_eq(p.limits.stdout_bytes, 1024 * 1024);
	cr_assert_eq(p.limits.stderr_bytes, 1024 * 1024);
	cr_assert_eq(p.on_output_limit, OUTPUT_TRUNCATE);
	cr_assert_str_eq(p.hostname, "stockade");
	cr_assert_str_eq(p.user, "sandbox");
	cr_assert_eq(p.uid, 1000);
	cr_assert_eq(p.gid, 1000);
	cr_assert_str_eq(p.home, "/home/sandbox");
	cr_assert_eq(p.unsafe_no_seccomp, false);
	cr_assert_eq(p.files.file_bytes, 64 * MIB);
	cr_assert_eq(p.files.workspace_bytes, 1024 * MIB);
	cr_assert_eq(p.files.max_files, 100000);
	cr_assert_eq(p.files.max_path, 4096);
	cr_assert_eq(p.files.max_depth, 64);
	cr_assert_eq(p.files.mode_mask, 0755);
	cr_assert_eq(p.files.allow_hardlinks, false);
	cr_assert_eq(p.files.inline_bytes, 8192 * 1024);
	cr_assert_eq(p.commit, COMMIT_ALWAYS);
	/* The lists change as the default grows; their heads do not. */
	cr_assert_geq(p.nenv, 1);
	cr_assert_str_eq(p.env[0], "PATH=/usr/local/bin:/usr/bin:/bin");
	cr_assert(has_env(&p, "HOME=/home/sandbox"));
	cr_assert_geq(p.nmounts, 2);
	cr_assert_eq(p.mounts[0].kind, MOUNT_RO_BIND);
	cr_assert_str_eq(p.mounts[0].source, "/usr");
	cr_assert_str_eq(p.mounts[0].target, "/usr");
	cr_assert_eq(p.mounts[1].kind, MOUNT_RO_BIND_TRY);
	cr_assert_str_eq(p.mounts[1].source, "/bin");
	policy_clear(&p);
}

Test(default_policy, round_trip)
{
	struct policy p;

	load_default(&p);
	assert_round_trip(&p);
	policy_clear(&p);
}

/* The canonical form of the default, as the first lines show it. */
Test(default_policy, canonical_text)
{
	struct policy p;
	char *text;

	load_default(&p);
	text = format(&p);
	cr_assert(strncmp(text,
		      "# stockade policy (canonical form of <default>)\n"
		      "\n[policy]\nreplace =\nno_programs = false\n"
		      "\n[limits]\nwall_time_ms = 30000\n",
		      strlen("# stockade policy (canonical form of "
			     "<default>)\n\n[policy]\nreplace =\n"
			     "no_programs = false\n\n[limits]\n"
			     "wall_time_ms = 30000\n")) == 0,
	    "%s", text);
	cr_assert_not_null(strstr(text, "\n[jail]\nhostname = stockade\n"));
	cr_assert_not_null(strstr(text, "unsafe_no_seccomp = false\n"));
	cr_assert_not_null(strstr(text,
	    "unsafe_no_seccomp = false\n\n[files]\n"
	    "max_file_mb = 64\n"));
	cr_assert_not_null(strstr(text, "\nmode_mask = 0755\n"));
	cr_assert_not_null(strstr(text,
	    "\ninline_kb = 8192\ncommit = always\n\n"
	    "[environment]\n"));
	cr_assert_not_null(strstr(text,
	    "\n[filesystem]\nro_bind = /usr\nro_bind_try = /bin\n"));
	free(text);
	policy_clear(&p);
}

Test(default_policy, load_file_equals_default_for_empty)
{
	struct policy d, p;

	load_default(&d);
	load_fixture("valid-empty.ini", &p);
	assert_policy_eq(&d, &p);
	policy_clear(&p);
	policy_clear(&d);
}

/* ---- Valid fixtures ------------------------------------------------------ */

Test(valid, limits)
{
	struct policy d, p;

	load_default(&d);
	load_fixture("valid-limits.ini", &p);
	cr_assert_eq(p.limits.wall_ms, 120000);
	cr_assert_eq(p.limits.cpu_ms, 1);
	cr_assert_eq(p.limits.memory_bytes, 16 * MIB);
	cr_assert_eq(p.limits.nproc, 65536);
	cr_assert_eq(p.limits.fsize_bytes, UINT64_C(1048576) * MIB);
	cr_assert_eq(p.limits.nofile, 16);
	cr_assert_eq(p.limits.tmp_bytes, 512 * MIB);
	cr_assert_eq(p.limits.home_bytes, 1 * MIB);
	cr_assert_eq(p.limits.stdout_bytes, 1024);
	cr_assert_eq(p.limits.stderr_bytes, UINT64_C(1048576) * 1024);
	cr_assert_eq(p.on_output_limit, OUTPUT_KILL);
	/* Everything the file leaves out is the default's. */
	assert_env_eq(&p, &d);
	assert_mounts_eq(&p, &d);
	assert_jail_eq(&p, &d);
	policy_clear(&p);
	policy_clear(&d);
}

Test(valid, jail)
{
	struct policy d, p;

	load_default(&d);
	load_fixture("valid-jail.ini", &p);
	cr_assert_str_eq(p.hostname, "build-42");
	cr_assert_str_eq(p.user, "_ci-runner1");
	cr_assert_eq(p.uid, 65533);
	cr_assert_eq(p.gid, 1);
	cr_assert_str_eq(p.home, "/home/ci");
	cr_assert_eq(p.unsafe_no_seccomp, true);
	assert_limits_eq(&p.limits, &d.limits);
	assert_env_eq(&p, &d);
	policy_clear(&p);
	policy_clear(&d);
}

/* [jail] client_env (issue 22): the default lets a client set any name;
 * a list allows its names and prefixes only; an empty one nothing. */
Test(valid, client_env)
{
	struct policy d, p, none;
	char err[POLICY_ERR_MAX];

	load_default(&d);
	cr_assert_str_eq(d.client_env, "*");
	cr_assert(policy_client_env_allows(&d, "LD_PRELOAD"));
	cr_assert(policy_client_env_allows(&d, "x"));
	load_fixture("valid-client-env.ini", &p);
	cr_assert(policy_client_env_allows(&p, "LANG"));
	cr_assert(policy_client_env_allows(&p, "TZ"));
	cr_assert(policy_client_env_allows(&p, "MY_"));
	cr_assert(policy_client_env_allows(&p, "MY_VAR"));
	cr_assert(!policy_client_env_allows(&p, "LANGUAGE"));
	cr_assert(!policy_client_env_allows(&p, "LAN"));
	cr_assert(!policy_client_env_allows(&p, "MY"));
	cr_assert(!policy_client_env_allows(&p, "PATH"));
	memset(&none, 0, sizeof(none));
	cr_assert_eq(policy_load_string(&none, "[jail]\nclient_env =\n", "t",
			 err, sizeof(err)),
	    0, "%s", err);
	cr_assert(!policy_client_env_allows(&none, "LANG"));
	policy_clear(&none);
	policy_clear(&p);
	policy_clear(&d);
}

Test(valid, files)
{
	struct policy d, p;

	load_default(&d);
	load_fixture("valid-files.ini", &p);
	cr_assert_eq(p.files.file_bytes, UINT64_C(1048576) * MIB);
	cr_assert_eq(p.files.workspace_bytes, 1 * MIB);
	cr_assert_eq(p.files.max_files, 1);
	cr_assert_eq(p.files.max_path, 1);
	cr_assert_eq(p.files.max_depth, 256);
	cr_assert_eq(p.files.mode_mask, 0600);
	cr_assert_eq(p.files.allow_hardlinks, true);
	cr_assert_eq(p.files.inline_bytes, 1024);
	assert_limits_eq(&p.limits, &d.limits);
	assert_jail_eq(&p, &d);
	assert_env_eq(&p, &d);
	assert_mounts_eq(&p, &d);
	policy_clear(&p);
	policy_clear(&d);
}

/* A mask of 0 is allowed (files no client can give any bit) and is
 * written back as "0000". */
Test(valid, files_mode_zero)
{
	struct policy p;
	char *text;

	load_fixture("valid-files-mode-zero.ini", &p);
	cr_assert_eq(p.files.mode_mask, 0);
	text = format(&p);
	cr_assert_not_null(strstr(text, "\nmode_mask = 0000\n"), "%s", text);
	free(text);
	policy_clear(&p);
}

/* The default's variables, PATH and LANG in their places with the
 * file's values, and the file's new one last. */
Test(valid, environment_adds_to_the_list)
{
	struct policy d, p;

	load_default(&d);
	load_fixture("valid-environment.ini", &p);
	cr_assert_eq(p.nenv, d.nenv + 1);
	cr_assert_str_eq(p.env[0], "PATH=/usr/bin:/bin");
	cr_assert(has_env(&p, "LANG=en_US.UTF-8"));
	cr_assert(!has_env(&p, "LANG=C.UTF-8"));
	cr_assert(has_env(&p, "TZ=UTC"));
	cr_assert(has_env(&p, "HOME=/home/sandbox"));
	cr_assert_str_eq(p.env[p.nenv - 1], "_private_1=a = b: c");
	cr_assert_eq(p.replace, 0);
	/* Each entry says where it came from. */
	cr_assert(p.env_from[0].in_file);
	cr_assert_eq(p.env_from[0].line, 4);
	cr_assert(!p.env_from[1].in_file);
	cr_assert(p.env_from[p.nenv - 1].in_file);
	cr_assert_eq(p.env_from[p.nenv - 1].line, 6);
	assert_limits_eq(&p.limits, &d.limits);
	assert_mounts_eq(&p, &d);
	assert_jail_eq(&p, &d);
	policy_clear(&p);
	policy_clear(&d);
}

Test(valid, environment_replace_is_the_whole_list)
{
	struct policy d, p;

	load_default(&d);
	load_fixture("valid-environment-replace.ini", &p);
	cr_assert_eq(p.replace, POLICY_LIST_ENVIRONMENT);
	cr_assert_eq(p.nenv, 3);
	cr_assert_str_eq(p.env[0], "PATH=/usr/bin:/bin");
	cr_assert_str_eq(p.env[1], "LANG=en_US.UTF-8");
	cr_assert_str_eq(p.env[2], "_private_1=a = b: c");
	cr_assert(!has_env(&p, "TZ=UTC"));
	assert_limits_eq(&p.limits, &d.limits);
	assert_mounts_eq(&p, &d);
	assert_jail_eq(&p, &d);
	policy_clear(&p);
	policy_clear(&d);
}

/* /usr and /lib64 are the default's binds, in their places; the two
 * others come after the default's. */
Test(valid, filesystem_adds_to_the_list)
{
	struct policy d, p;
	size_t n;

	load_default(&d);
	load_fixture("valid-filesystem.ini", &p);
	n = p.nmounts;
	cr_assert_eq(n, d.nmounts + 2);
	cr_assert_eq(p.mounts[0].kind, MOUNT_RO_BIND);
	cr_assert_str_eq(p.mounts[0].source, "/usr");
	cr_assert(p.mounts_from[0].in_file);
	cr_assert_eq(p.mounts_from[0].line, 2);
	for (size_t i = 1; i < d.nmounts; i++) {
		cr_assert_str_eq(p.mounts[i].source, d.mounts[i].source);
		cr_assert_eq(p.mounts[i].kind, d.mounts[i].kind);
	}
	cr_assert_eq(p.mounts[n - 2].kind, MOUNT_RO_BIND);
	cr_assert_str_eq(p.mounts[n - 2].source, "/opt/tool chain/bin");
	cr_assert_str_eq(p.mounts[n - 2].target, "/opt/tool chain/bin");
	cr_assert_eq(p.mounts[n - 1].kind, MOUNT_RO_BIND_TRY);
	cr_assert_str_eq(p.mounts[n - 1].source, "/etc/ssl");
	cr_assert_eq(p.mounts_from[n - 1].line, 5);
	assert_limits_eq(&p.limits, &d.limits);
	assert_env_eq(&p, &d);
	assert_jail_eq(&p, &d);
	policy_clear(&p);
	policy_clear(&d);
}

/* replace after the entries still makes them the whole list. */
Test(valid, filesystem_replace_is_the_whole_list)
{
	struct policy d, p;

	load_default(&d);
	load_fixture("valid-filesystem-replace.ini", &p);
	cr_assert_eq(p.replace, POLICY_LIST_FILESYSTEM);
	cr_assert_eq(p.nmounts, 4);
	cr_assert_eq(p.mounts[0].kind, MOUNT_RO_BIND);
	cr_assert_str_eq(p.mounts[0].source, "/usr");
	cr_assert_eq(p.mounts[1].kind, MOUNT_RO_BIND_TRY);
	cr_assert_str_eq(p.mounts[1].source, "/lib64");
	cr_assert_eq(p.mounts[2].kind, MOUNT_RO_BIND);
	cr_assert_str_eq(p.mounts[2].source, "/opt/tool chain/bin");
	cr_assert_eq(p.mounts[3].kind, MOUNT_RO_BIND_TRY);
	cr_assert_str_eq(p.mounts[3].source, "/etc/ssl");
	assert_limits_eq(&p.limits, &d.limits);
	assert_env_eq(&p, &d);
	assert_jail_eq(&p, &d);
	policy_clear(&p);
	policy_clear(&d);
}

/* Replaced by none: an empty list, written back as no section. */
Test(valid, replace_with_an_empty_list)
{
	struct policy p;
	char *text;

	load_fixture("valid-replace-empty.ini", &p);
	cr_assert_eq(p.nenv, 0);
	cr_assert_null(p.env);
	cr_assert(p.no_programs);
	cr_assert_gt(p.nmounts, 0);
	text = format(&p);
	cr_assert_null(strstr(text, "[environment]"), "%s", text);
	cr_assert_not_null(strstr(text, "\nreplace = environment\n"), "%s",
	    text);
	free(text);
	policy_clear(&p);
}

Test(valid, comments_and_blank_lines)
{
	struct policy d, p;

	load_default(&d);
	load_fixture("valid-comments.ini", &p);
	cr_assert_eq(p.limits.wall_ms, 1000);
	cr_assert_str_eq(p.hostname, "tight");
	cr_assert_eq(p.limits.cpu_ms, d.limits.cpu_ms);
	assert_env_eq(&p, &d);
	assert_mounts_eq(&p, &d);
	policy_clear(&p);
	policy_clear(&d);
}

Test(valid, crlf_line_ends)
{
	struct policy p;

	load_fixture("valid-crlf.ini", &p);
	cr_assert_eq(p.limits.wall_ms, 2000);
	cr_assert_str_eq(p.env[p.nenv - 1], "A=b");
	policy_clear(&p);
}

Test(valid, repeated_list_section_appends)
{
	struct policy p;

	load_fixture("valid-repeated-section.ini", &p);
	cr_assert_geq(p.nenv, 2);
	cr_assert_str_eq(p.env[p.nenv - 2], "A=1");
	cr_assert_str_eq(p.env[p.nenv - 1], "B=2");
	cr_assert_eq(p.limits.nproc, 8);
	policy_clear(&p);
}

Test(valid, line_of_199_bytes)
{
	struct policy p;

	load_fixture("valid-long-line.ini", &p);
	cr_assert_eq(strlen(p.mounts[p.nmounts - 1].source),
	    199 - strlen("ro_bind = "));
	policy_clear(&p);
}

Test(valid, odd_values)
{
	struct policy p;

	load_fixture("valid-odd-values.ini", &p);
	cr_assert_geq(p.nenv, 4);
	cr_assert_str_eq(p.env[p.nenv - 4], "EMPTY=");
	cr_assert_str_eq(p.env[p.nenv - 3], "SEMI=;starts with a semicolon");
	cr_assert_str_eq(p.env[p.nenv - 2], "EQUALS=a=b");
	cr_assert_str_eq(p.env[p.nenv - 1], "HASH=#not a comment");
	policy_clear(&p);
}

/* Every valid fixture, whatever else is asserted of it, round-trips. */
Test(valid, every_fixture_round_trips)
{
	char *dir;
	struct dirent *e;
	DIR *d;
	int n = 0;

	cr_assert(asprintf(&dir, "%s/tests/policy", source_root()) > 0);
	d = opendir(dir);
	cr_assert_not_null(d, "%s: %s", dir, strerror(errno));
	while ((e = readdir(d))) {
		struct policy p;

		if (strncmp(e->d_name, "valid-", 6) != 0)
			continue;
		load_fixture(e->d_name, &p);
		assert_round_trip(&p);
		policy_clear(&p);
		n++;
	}
	closedir(d);
	free(dir);
	cr_assert_geq(n, 5);
}

/* ---- Overlay semantics ---------------------------------------------------- */

Test(overlay, scalar_keys_replace_one_value)
{
	struct policy d, p;

	load_default(&d);
	load_text("[limits]\nprocesses = 7\n[jail]\nuid = 4242\n", &p);
	cr_assert_eq(p.limits.nproc, 7);
	cr_assert_eq(p.uid, 4242);
	p.limits.nproc = d.limits.nproc;
	p.uid = d.uid;
	assert_policy_eq(&p, &d);
	policy_clear(&p);
	policy_clear(&d);
}

/* Issue 22: one variable keeps the default's others, PATH first. */
Test(overlay, environment_key_adds_to_the_default_list)
{
	struct policy d, p;

	load_default(&d);
	load_text("[environment]\nFOO = bar\n", &p);
	cr_assert_eq(p.nenv, d.nenv + 1);
	for (size_t i = 0; i < d.nenv; i++)
		cr_assert_str_eq(p.env[i], d.env[i]);
	cr_assert_str_eq(p.env[d.nenv], "FOO=bar");
	assert_mounts_eq(&p, &d);
	assert_limits_eq(&p.limits, &d.limits);
	assert_jail_eq(&p, &d);
	policy_clear(&p);
	policy_clear(&d);
}

/* Giving a variable the default also has is not a duplicate: it takes
 * the default's place. */
Test(overlay, environment_key_takes_the_place_of_the_defaults)
{
	struct policy d, p;

	load_default(&d);
	load_text("[environment]\nTZ = Europe/Paris\nPATH = /bin\n", &p);
	cr_assert_eq(p.nenv, d.nenv);
	cr_assert_str_eq(p.env[0], "PATH=/bin");
	cr_assert(has_env(&p, "TZ=Europe/Paris"));
	cr_assert(!has_env(&p, "TZ=UTC"));
	policy_clear(&p);
	policy_clear(&d);
}

/* Issue 22: one bind keeps the default's /usr and the others. */
Test(overlay, filesystem_key_adds_to_the_default_list)
{
	struct policy d, p;

	load_default(&d);
	load_text("[filesystem]\nro_bind = /data\n", &p);
	cr_assert_eq(p.nmounts, d.nmounts + 1);
	cr_assert_str_eq(p.mounts[0].source, "/usr");
	cr_assert_eq(p.mounts[0].kind, MOUNT_RO_BIND);
	cr_assert_str_eq(p.mounts[d.nmounts].source, "/data");
	cr_assert_eq(p.mounts[d.nmounts].kind, MOUNT_RO_BIND);
	cr_assert(p.mounts_from[d.nmounts].in_file);
	cr_assert_eq(p.mounts_from[d.nmounts].line, 2);
	cr_assert(!p.mounts_from[0].in_file);
	assert_env_eq(&p, &d);
	assert_limits_eq(&p.limits, &d.limits);
	policy_clear(&p);
	policy_clear(&d);
}

/* A bind of a path the default binds changes its kind in place. */
Test(overlay, filesystem_key_takes_the_place_of_the_defaults)
{
	struct policy d, p;

	load_default(&d);
	load_text("[filesystem]\nro_bind_try = /usr\nro_bind = /bin\n", &p);
	cr_assert_eq(p.nmounts, d.nmounts);
	cr_assert_str_eq(p.mounts[0].source, "/usr");
	cr_assert_eq(p.mounts[0].kind, MOUNT_RO_BIND_TRY);
	cr_assert_str_eq(p.mounts[1].source, "/bin");
	cr_assert_eq(p.mounts[1].kind, MOUNT_RO_BIND);
	policy_clear(&p);
	policy_clear(&d);
}

Test(overlay, replace_drops_the_defaults_list_only)
{
	struct policy d, p;

	load_default(&d);
	load_text("[environment]\nFOO = bar\nPATH = /bin\n"
		  "[policy]\nreplace = environment\n",
	    &p);
	cr_assert_eq(p.nenv, 2);
	cr_assert_str_eq(p.env[0], "FOO=bar");
	cr_assert_str_eq(p.env[1], "PATH=/bin");
	assert_mounts_eq(&p, &d);
	assert_limits_eq(&p.limits, &d.limits);
	policy_clear(&p);
	load_text("[policy]\nreplace = filesystem\n"
		  "[filesystem]\nro_bind = /usr\nro_bind_try = /opt/x\n",
	    &p);
	cr_assert_eq(p.nmounts, 2);
	cr_assert_str_eq(p.mounts[1].source, "/opt/x");
	cr_assert_eq(p.mounts[1].kind, MOUNT_RO_BIND_TRY);
	assert_env_eq(&p, &d);
	policy_clear(&p);
	/* Replaced by none: no bind at all. */
	load_text("[policy]\nreplace = filesystem, environment\n"
		  "no_programs = true\n",
	    &p);
	cr_assert_eq(p.nmounts, 0);
	cr_assert_eq(p.nenv, 0);
	assert_round_trip(&p);
	policy_clear(&p);
	policy_clear(&d);
}

/*
 * With the default's entries, a file's new ones may pass the limits: the
 * error is at the first one past them and says that the default's count.
 */
Test(overlay, limits_count_the_defaults_entries)
{
	char err[POLICY_ERR_MAX], want[POLICY_ERR_MAX];
	struct policy d, p;
	char *text = NULL;
	size_t len = 0, over;
	FILE *f;

	load_default(&d);
	f = open_memstream(&text, &len);
	cr_assert_not_null(f);
	fprintf(f, "[filesystem]\n");
	for (size_t i = 0; i < 64; i++)
		fprintf(f, "ro_bind_try = /m%zu\n", i);
	cr_assert_eq(fclose(f), 0);
	/* Line 1 is the header; the (64 - n + 1)th new bind is too many. */
	over = 64 - d.nmounts + 1;
	snprintf(want, sizeof(want),
	    "t:%zu: too many mounts (at most 64, "
	    "the default's %zu included; [policy] replace = filesystem "
	    "leaves them out)",
	    over + 1, d.nmounts);
	memset(&p, 0, sizeof(p));
	cr_assert_eq(policy_load_string(&p, text, "t", err, sizeof(err)),
	    -EINVAL);
	cr_assert_str_eq(err, want);
	free(text);

	text = NULL;
	f = open_memstream(&text, &len);
	cr_assert_not_null(f);
	fprintf(f, "[environment]\n");
	for (size_t i = 0; i < 256; i++)
		fprintf(f, "V%zu = %zu\n", i, i);
	cr_assert_eq(fclose(f), 0);
	over = 256 - d.nenv + 1;
	snprintf(want, sizeof(want),
	    "t:%zu: too many environment variables "
	    "(at most 256, the default's %zu included; [policy] replace "
	    "= environment leaves them out)",
	    over + 1, d.nenv);
	cr_assert_eq(policy_load_string(&p, text, "t", err, sizeof(err)),
	    -EINVAL);
	cr_assert_str_eq(err, want);
	free(text);
	policy_clear(&d);
}

Test(overlay, file_may_repeat_a_default_key)
{
	struct policy p;

	/* "Duplicate" means twice in one file, not once here and once in the
	 * default. */
	load_text("[limits]\nwall_time_ms = 30000\n", &p);
	cr_assert_eq(p.limits.wall_ms, 30000);
	policy_clear(&p);
}

Test(overlay, load_string_name)
{
	char err[POLICY_ERR_MAX];
	struct policy p;

	memset(&p, 0, sizeof(p));
	cr_assert_eq(policy_load_string(&p, "[limits]\nbogus = 1\n", "inline",
			 err, sizeof(err)),
	    -EINVAL);
	cr_assert_str_eq(err, "inline:2: unknown key \"bogus\" in [limits]");
	assert_cleared(&p);
	cr_assert_eq(policy_load_string(&p, "", "inline", err, sizeof(err)), 0);
	cr_assert_str_eq(p.name, "inline");
	policy_clear(&p);
}

Test(overlay, error_buffer_is_optional_and_truncated)
{
	char err[12];
	struct policy p;

	cr_assert_eq(policy_load_string(&p, "[x]\n", "inline", NULL, 0),
	    -EINVAL);
	assert_cleared(&p);
	cr_assert_eq(policy_load_string(&p, "[x]\n", "inline", err,
			 sizeof(err)),
	    -EINVAL);
	cr_assert_str_eq(err, "inline:1: u");
}

/* ---- Files that cannot be read ------------------------------------------ */

Test(open, missing_file)
{
	char err[POLICY_ERR_MAX], want[POLICY_ERR_MAX];
	char *path = fixture("no-such-file.ini");
	struct policy p;

	cr_assert_eq(policy_load_file(&p, path, err, sizeof(err)), -ENOENT);
	snprintf(want, sizeof(want), "%s: %s", path, strerror(ENOENT));
	cr_assert_str_eq(err, want);
	assert_cleared(&p);
	free(path);
}

Test(open, directory)
{
	char err[POLICY_ERR_MAX], want[POLICY_ERR_MAX];
	char *path = fixture("");
	struct policy p;

	cr_assert_eq(policy_load_file(&p, path, err, sizeof(err)), -EISDIR);
	snprintf(want, sizeof(want), "%s: %s", path, strerror(EISDIR));
	cr_assert_str_eq(err, want);
	assert_cleared(&p);
	free(path);
}

/* ---- Bounded work ---------------------------------------------------------- */

/* A line with no end is refused after inih's buffer, not read to the end. */
Test(bounds, dev_zero_stops_at_first_line)
{
	char err[POLICY_ERR_MAX];
	struct policy p;

	cr_assert_eq(policy_load_file(&p, "/dev/zero", err, sizeof(err)),
	    -EINVAL);
	cr_assert_str_eq(err, "/dev/zero:1: line longer than 199 bytes");
	assert_cleared(&p);
}

Test(bounds, text_larger_than_1_mib)
{
	char err[POLICY_ERR_MAX];
	size_t i, lines = 600000;
	char *text = malloc(2 * lines + 1);
	struct policy p;

	cr_assert_not_null(text);
	for (i = 0; i < lines; i++)
		memcpy(text + 2 * i, "#\n", 2);
	text[2 * lines] = '\0';
	cr_assert_eq(policy_load_string(&p, text, "big", err, sizeof(err)),
	    -EINVAL);
	/* Each line is 2 bytes: line 524289 is the first past 1 MiB. */
	cr_assert_str_eq(err, "big:524289: policy longer than 1048576 bytes");
	assert_cleared(&p);
	free(text);
}

/* ---- policy_format -------------------------------------------------------- */

/* A policy no file could produce is refused, and nothing is written. */
static void
expect_format_refused(const struct policy *p)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int r;

	cr_assert_not_null(f);
	r = policy_format(p, f);
	fclose(f);
	cr_assert_eq(r, -EINVAL);
	cr_assert_eq(len, 0, "wrote: %s", text);
	free(text);
}

Test(format, refuses_what_would_not_load_back)
{
	char env1[] = "PATH=/bin\n[jail]", env2[] = "PATH= /bin",
	     env3[] = "PATH=/bin ;x", env4[] = "NO_EQUALS", env5[] = "HOME=dup",
	     env6[] = "1X=y";
	char *bad_env[] = {env1, env2, env3, env4, env5, env6};
	char elsewhere[] = "/elsewhere", dotdot[] = "/home/../etc";
	struct policy p;
	char *saved;
	size_t i;

	load_default(&p);
	p.limits.memory_bytes = 1000; /* not whole MiB */
	expect_format_refused(&p);
	p.limits.memory_bytes = 8 * MIB; /* below the range */
	expect_format_refused(&p);
	p.limits.memory_bytes = 64 * MIB;
	p.uid = 0;
	expect_format_refused(&p);
	p.uid = 1000;
	p.files.mode_mask = 04755; /* never setuid */
	expect_format_refused(&p);
	p.files.mode_mask = 01000; /* nor sticky */
	expect_format_refused(&p);
	p.files.mode_mask = 0755;
	p.files.file_bytes = 64 * MIB + 1; /* not whole MiB */
	expect_format_refused(&p);
	p.files.file_bytes = 64 * MIB;
	p.files.max_path = 4097;
	expect_format_refused(&p);
	p.files.max_path = 4096;
	p.files.max_depth = 0;
	expect_format_refused(&p);
	p.files.max_depth = 64;
	p.files.inline_bytes = 1000; /* not whole KiB */
	expect_format_refused(&p);
	p.files.inline_bytes = 8 * MIB;

	saved = p.env[0];
	for (i = 0; i < sizeof(bad_env) / sizeof(bad_env[0]); i++) {
		p.env[0] = bad_env[i];
		expect_format_refused(&p);
	}
	p.env[0] = saved;

	saved = p.mounts[0].target;
	p.mounts[0].target = elsewhere;
	expect_format_refused(&p);
	p.mounts[0].target = saved;
	saved = p.home;
	p.home = dotdot;
	expect_format_refused(&p);
	p.home = saved;

	assert_round_trip(&p);
	policy_clear(&p);
}

Test(format, refuses_empty_lists)
{
	struct policy p;
	size_t n;

	load_default(&p);
	n = p.nenv;
	p.nenv = 0;
	expect_format_refused(&p);
	p.nenv = n;
	n = p.nmounts;
	p.nmounts = 0;
	expect_format_refused(&p);
	p.nmounts = n;
	n = p.writeback.n;
	p.writeback.n = 0;
	expect_format_refused(&p);
	p.writeback.n = n;
	policy_clear(&p);
}

/* With [policy] replace, an empty list is what the file said. */
Test(format, writes_empty_replaced_lists)
{
	struct policy p;
	size_t n;
	char *text;

	load_default(&p);
	n = p.nmounts;
	p.nmounts = 0;
	p.replace = POLICY_LIST_FILESYSTEM;
	text = format(&p);
	cr_assert_null(strstr(text, "[filesystem]"), "%s", text);
	free(text);
	assert_round_trip(&p);
	p.nmounts = n;
	p.replace = 1u << 5; /* no list */
	expect_format_refused(&p);
	policy_clear(&p);
}

Test(format, write_error_is_eio)
{
	struct policy p;
	FILE *f = fopen("/dev/full", "w");

	cr_assert_not_null(f);
	load_default(&p);
	cr_assert_eq(policy_format(&p, f), -EIO);
	fclose(f);
	policy_clear(&p);
}

Test(format, header_names_source_on_one_line)
{
	char err[POLICY_ERR_MAX];
	const char *want = "# stockade policy (canonical form of "
			   "evil?[limits]?processes = 1)\n\n[policy]\n";
	struct policy p, q;
	char *text;

	memset(&p, 0, sizeof(p));
	cr_assert_eq(policy_load_string(&p, "", "evil\n[limits]\nprocesses = 1",
			 err, sizeof(err)),
	    0, "%s", err);
	text = format(&p);
	cr_assert(strncmp(text, want, strlen(want)) == 0, "%s", text);
	memset(&q, 0, sizeof(q));
	cr_assert_eq(policy_load_string(&q, text, "again", err, sizeof(err)), 0,
	    "%s", err);
	cr_assert_eq(q.limits.nproc, 64);
	free(text);
	policy_clear(&q);
	policy_clear(&p);
}

Test(format, long_values_round_trip)
{
	char text[512];
	struct policy p;
	/* "V=" plus 197 bytes is 199: "V = ..." would not fit a line. */
	char v[198];

	memset(v, 'x', sizeof(v) - 1);
	v[sizeof(v) - 1] = '\0';
	snprintf(text, sizeof(text), "[environment]\nV=%s\n", v);
	load_text(text, &p);
	cr_assert_eq(strlen(p.env[p.nenv - 1]), 199);
	assert_round_trip(&p);
	policy_clear(&p);
}

/* ---- policy_show ----------------------------------------------------------- */

/* policy_show(P) as a string the caller frees. */
static char *
show(const struct policy *p)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	cr_assert_not_null(f);
	cr_assert_eq(policy_show(p, f), 0);
	cr_assert_eq(fclose(f), 0);
	return text;
}

/* The text loads back to an equal policy. */
static void
assert_show_loads_back(const struct policy *p, const char *text)
{
	char err[POLICY_ERR_MAX];
	struct policy q;

	memset(&q, 0, sizeof(q));
	cr_assert_eq(policy_load_string(&q, text, "shown", err, sizeof(err)), 0,
	    "%s\n%s", err, text);
	assert_policy_eq(p, &q);
	cr_assert_eq(q.replace, p->replace);
	cr_assert_eq(q.no_programs, p->no_programs);
	policy_clear(&q);
}

Test(show, names_where_each_line_comes_from)
{
	struct policy p;
	char *text;

	load_text("[environment]\nFOO = bar\n[filesystem]\nro_bind = /data\n",
	    &p);
	text = show(&p);
	cr_assert_not_null(strstr(text, "\nFOO = bar ; file:2\n"), "%s", text);
	cr_assert_not_null(strstr(text, "\nro_bind = /data ; file:4\n"), "%s",
	    text);
	cr_assert_not_null(strstr(text, "\nro_bind = /usr ; default:"), "%s",
	    text);
	cr_assert_not_null(strstr(text,
			       "\nPATH = /usr/local/bin:/usr/bin:/bin "
			       "; default:"),
	    "%s", text);
	/* An empty value's origin goes on the line before it. */
	cr_assert_not_null(strstr(text, "\n; cgroup: default:"), "%s", text);
	cr_assert_not_null(strstr(text,
			       "\n[environment]\n; the default's "
			       "list, the file's entries added or in place "
			       "of the default's\n"),
	    "%s", text);
	assert_show_loads_back(&p, text);
	free(text);
	policy_clear(&p);
}

Test(show, says_that_a_list_was_replaced)
{
	struct policy p;
	char *text;

	load_text("[policy]\nreplace = filesystem\n"
		  "[filesystem]\nro_bind = /usr\n",
	    &p);
	text = show(&p);
	cr_assert_not_null(strstr(text, "\nreplace = filesystem ; file:2\n"),
	    "%s", text);
	cr_assert_not_null(strstr(text,
			       "\n[filesystem]\n; the file's list "
			       "alone: [policy] replace = filesystem "
			       "(file:2) leaves out the default's\n"
			       "ro_bind = /usr ; file:4\n"),
	    "%s", text);
	/* The default's binds are not in force, so not shown. */
	cr_assert_null(strstr(text, "ro_bind_try = /bin"), "%s", text);
	assert_show_loads_back(&p, text);
	free(text);
	policy_clear(&p);
}

Test(show, the_default_alone_is_all_default)
{
	struct policy p;
	char *text;

	load_default(&p);
	text = show(&p);
	cr_assert_null(strstr(text, "; file:"), "%s", text);
	cr_assert_null(strstr(text, "unknown"), "%s", text);
	cr_assert_not_null(strstr(text, "\nwall_time_ms = 30000 ; default:"),
	    "%s", text);
	assert_show_loads_back(&p, text);
	free(text);
	policy_clear(&p);
}

/* Every valid fixture's shown form loads back. */
Test(show, every_fixture_loads_back)
{
	char *dir;
	struct dirent *e;
	DIR *d;

	cr_assert(asprintf(&dir, "%s/tests/policy", source_root()) > 0);
	d = opendir(dir);
	cr_assert_not_null(d, "%s: %s", dir, strerror(errno));
	while ((e = readdir(d))) {
		struct policy p;
		char *text;

		if (strncmp(e->d_name, "valid-", 6) != 0)
			continue;
		load_fixture(e->d_name, &p);
		text = show(&p);
		assert_show_loads_back(&p, text);
		free(text);
		policy_clear(&p);
	}
	closedir(d);
	free(dir);
}

/* ---- policy_check_programs, policy_check_source ------------------------- */

/* Loads TEXT (named "test") and expects policy_check_programs to say MSG
 * ("test:LINE: ..."), or nothing when MSG is NULL. */
static void
expect_programs(const char *text, const char *msg)
{
	char err[POLICY_ERR_MAX] = "";
	struct policy p;
	int r;

	load_text(text, &p);
	r = policy_check_programs(&p, err, sizeof(err));
	if (msg == NULL) {
		cr_assert_eq(r, 0, "%s: %s", text, err);
	} else {
		cr_assert_eq(r, -EINVAL, "%s", text);
		cr_assert_str_eq(err, msg);
	}
	policy_clear(&p);
}

#define NO_PATH_DIR                                                          \
	"the job has no program to run: no directory of PATH (%s) is at or " \
	"below a bind of [filesystem]; bind one (ro_bind = /usr), or set "   \
	"[policy] no_programs = true if that is meant"

Test(check, programs)
{
	char want[POLICY_ERR_MAX];

	/* The default, and files that add to it, have programs. */
	expect_programs("", NULL);
	expect_programs("[filesystem]\nro_bind = /data\n", NULL);
	expect_programs("[environment]\nFOO = bar\n", NULL);
	expect_programs("[policy]\nreplace = filesystem\n"
			"[filesystem]\nro_bind = /usr\n",
	    NULL);
	expect_programs("[environment]\nPATH = /opt/x/bin/:/nowhere\n"
			"[filesystem]\nro_bind = /opt/x\n",
	    NULL);
	/* No PATH: at the replace that dropped the default's. */
	expect_programs("[environment]\nFOO = bar\n"
			"[policy]\nreplace = environment\n",
	    "test:4: the job has no program to run: [environment] "
	    "has no PATH; give one, or set [policy] no_programs = "
	    "true if that is meant");
	expect_programs("[environment]\nPATH =\n",
	    "test:2: the job has no program to run: [environment] "
	    "has an empty PATH; give one, or set [policy] "
	    "no_programs = true if that is meant");
	/* No /usr: at the replace, or at the file's PATH. */
	snprintf(want, sizeof(want), "test:2: " NO_PATH_DIR,
	    "/usr/local/bin:/usr/bin:/bin");
	expect_programs("[policy]\nreplace = filesystem\n"
			"[filesystem]\nro_bind = /opt\n",
	    want);
	snprintf(want, sizeof(want), "test:2: " NO_PATH_DIR, "/opt/bin:bin");
	expect_programs("[environment]\nPATH = /opt/bin:bin\n", want);
	/* /usrx is not below /usr. */
	snprintf(want, sizeof(want), "test:2: " NO_PATH_DIR, "/usrx/bin");
	expect_programs("[environment]\nPATH = /usrx/bin\n", want);
	/* Unless that is meant. */
	expect_programs("[policy]\nreplace = environment, filesystem\n"
			"no_programs = true\n",
	    NULL);
}

Test(check, ro_bind_sources)
{
	char text[8192], err[POLICY_ERR_MAX + PATH_MAX], want[8192];
	const char *dir = NULL;
	char tmpl[] = "/var/tmp/stockade-policy-XXXXXX", data[4096];
	struct policy p;

	/* Not under /tmp or /work, which the jail mounts itself (no bind
	 * may be there). */
	dir = mkdtemp(tmpl);
	cr_assert_not_null(dir, "mkdtemp: %s", strerror(errno));
	snprintf(data, sizeof(data), "%s/data", dir);
	cr_assert_eq(mkdir(data, 0755), 0);
	snprintf(text, sizeof(text),
	    "[filesystem]\nro_bind_try = %s/none\n"
	    "ro_bind = %s\n",
	    dir, data);
	load_text(text, &p);
	/* Every source of the default's and the file's is here. */
	for (size_t i = 0; i < p.nmounts; i++)
		cr_assert_eq(policy_check_source(&p, i, err, sizeof(err)), 0,
		    "%s", err);
	/* The bind vanishes: named at its line, with its path. */
	cr_assert_eq(rmdir(data), 0);
	cr_assert_eq(policy_check_source(&p, p.nmounts - 1, err, sizeof(err)),
	    -ENOENT);
	snprintf(want, sizeof(want),
	    "test:3: ro_bind %s: the host has no such "
	    "path (a job would end as sandbox_error; ro_bind_try binds a "
	    "path only where the host has it)",
	    data);
	cr_assert_str_eq(err, want);
	/* A missing ro_bind_try source is skipped by the launcher. */
	cr_assert_eq(policy_check_source(&p, p.nmounts - 2, err, sizeof(err)),
	    0);
	policy_clear(&p);
	cr_assert_eq(rmdir(dir), 0);
}

Test(policy_clear, accepts_null_and_twice)
{
	struct policy p;

	policy_clear(NULL);
	load_default(&p);
	policy_clear(&p);
	assert_cleared(&p);
	policy_clear(&p);
}

/* ---- Invalid fixtures: one test each, the exact message ----------------- */

#define HOSTNAME_RULE                                                       \
	"hostname must be 1 to 63 characters of [A-Za-z0-9-] not starting " \
	"with \"-\", not "
#define USER_RULE \
	"user must be 1 to 32 characters matching [a-z_][a-z0-9_-]*, not "
#define NOT_NORMALISED                                                      \
	"is not normalised (empty, \".\" or \"..\" component, or trailing " \
	"slash)"
#define SYNTAX "syntax error (expected \"key = value\" or \"[section]\")"

#define INVALID_FIXTURES(X)                                                    \
	X(unknown_section, "invalid-unknown-section.ini", 4,                   \
	    "unknown section [internet]")                                      \
	X(unknown_key, "invalid-unknown-key.ini", 2,                           \
	    "unknown key \"wall_time\" in [limits]")                           \
	X(unknown_key_filesystem, "invalid-unknown-key-filesystem.ini", 3,     \
	    "unknown key \"bind\" in [filesystem]")                            \
	X(key_outside_section, "invalid-key-outside-section.ini", 2,           \
	    "key \"wall_time_ms\" outside any section")                        \
	X(duplicate_key, "invalid-duplicate-key.ini", 4,                       \
	    "duplicate key \"wall_time_ms\"")                                  \
	X(duplicate_key_sections, "invalid-duplicate-key-sections.ini", 6,     \
	    "duplicate key \"uid\"")                                           \
	X(not_a_number, "invalid-not-a-number.ini", 2,                         \
	    "memory_mb must be a decimal integer, not \"1G\"")                 \
	X(negative, "invalid-negative.ini", 2,                                 \
	    "processes must be a decimal integer, not \"-1\"")                 \
	X(leading_zero, "invalid-leading-zero.ini", 2,                         \
	    "open_files must be a decimal integer, not \"0256\"")              \
	X(empty_number, "invalid-empty-number.ini", 2,                         \
	    "tmp_mb must be a decimal integer, not \"\"")                      \
	X(overflow, "invalid-overflow.ini", 2,                                 \
	    "wall_time_ms must be between 1 and 86400000")                     \
	X(out_of_range, "invalid-out-of-range.ini", 2,                         \
	    "wall_time_ms must be between 1 and 86400000")                     \
	X(below_range, "invalid-below-range.ini", 2,                           \
	    "memory_mb must be between 16 and 1048576")                        \
	X(uid_zero, "invalid-uid-zero.ini", 2,                                 \
	    "uid must be between 1 and 65533")                                 \
	X(gid_nobody, "invalid-gid-nobody.ini", 2,                             \
	    "gid must be between 1 and 65533")                                 \
	X(boolean, "invalid-bool.ini", 2,                                      \
	    "unsafe_no_seccomp must be true or false, not \"yes\"")            \
	X(on_output_limit, "invalid-on-output-limit.ini", 2,                   \
	    "on_output_limit: expected truncate or kill, got \"drop\"")        \
	X(env_name, "invalid-env-name.ini", 3,                                 \
	    "invalid variable name \"1PATH\" (expected "                       \
	    "[A-Za-z_][A-Za-z0-9_]*)")                                         \
	X(env_duplicate, "invalid-env-duplicate.ini", 4,                       \
	    "duplicate key \"PATH\"")                                          \
	X(relative_path, "invalid-relative-path.ini", 2,                       \
	    "ro_bind must be an absolute path, not \"usr\"")                   \
	X(dotdot_path, "invalid-dotdot-path.ini", 2,                           \
	    "ro_bind_try path \"/usr/../etc\" " NOT_NORMALISED)                \
	X(dot_path, "invalid-dot-path.ini", 2,                                 \
	    "ro_bind_try path \"/usr/./lib\" " NOT_NORMALISED)                 \
	X(empty_component, "invalid-empty-component.ini", 2,                   \
	    "ro_bind path \"/usr//lib\" " NOT_NORMALISED)                      \
	X(trailing_slash, "invalid-trailing-slash.ini", 2,                     \
	    "ro_bind path \"/usr/\" " NOT_NORMALISED)                          \
	X(root_path, "invalid-root-path.ini", 2, "ro_bind must not be \"/\"")  \
	X(jail_owned_tmp, "invalid-jail-owned-tmp.ini", 3,                     \
	    "ro_bind_try /tmp/etc is inside /tmp, which the jail mounts "      \
	    "itself")                                                          \
	X(jail_owned_proc, "invalid-jail-owned-proc.ini", 2,                   \
	    "ro_bind /proc is inside /proc, which the jail mounts itself")     \
	X(duplicate_mount, "invalid-duplicate-mount.ini", 3,                   \
	    "duplicate mount \"/usr\"")                                        \
	X(too_many_mounts, "invalid-too-many-mounts.ini", 66,                  \
	    "too many mounts (at most 64)")                                    \
	X(too_many_env, "invalid-too-many-env.ini", 258,                       \
	    "too many environment variables (at most 256)")                    \
	X(hostname, "invalid-hostname.ini", 2, HOSTNAME_RULE "\"-stockade\"")  \
	X(hostname_long, "invalid-hostname-long.ini", 2,                       \
	    HOSTNAME_RULE                                                      \
	    "\"hhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh"            \
	    "hhhhhhhhhhhhh\"")                                                 \
	X(hostname_dot, "invalid-hostname-dot.ini", 2,                         \
	    HOSTNAME_RULE "\"jail.example\"")                                  \
	X(user, "invalid-user.ini", 2, USER_RULE "\"Sandbox\"")                \
	X(user_long, "invalid-user-long.ini", 2,                               \
	    USER_RULE "\"uuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuu\"")                 \
	X(home, "invalid-home.ini", 2,                                         \
	    "home must be an absolute path, not \"home/sandbox\"")             \
	X(home_root, "invalid-home-root.ini", 2, "home must not be \"/\"")     \
	X(value_tab, "invalid-value-tab.ini", 2,                               \
	    "value of \"SHELL\" contains a control character")                 \
	X(control_char, "invalid-control-char.ini", 2,                         \
	    "line contains control character 0x1b")                            \
	X(nul, "invalid-nul.ini", 2, "line contains control character 0x00")   \
	X(long_line, "invalid-long-line.ini", 2, "line longer than 199 bytes") \
	X(syntax, "invalid-syntax.ini", 2, SYNTAX)                             \
	X(section_syntax, "invalid-section-syntax.ini", 1, SYNTAX)             \
	X(section_junk, "invalid-section-junk.ini", 1, SYNTAX)                 \
	X(indented, "invalid-indented.ini", 3,                                 \
	    "indented line (continuation lines are not supported)")            \
	X(empty_list_section, "invalid-empty-list-section.ini", 1,             \
	    "empty [environment] section (it adds nothing to the default's "   \
	    "list; [policy] replace = environment without the section "        \
	    "empties it)")                                                     \
	X(replace_unknown, "invalid-replace-unknown.ini", 2,                   \
	    "replace names \"mounts\", which is no list (the lists: "          \
	    "environment, filesystem, network, writeback)")                    \
	X(replace_twice, "invalid-replace-twice.ini", 2,                       \
	    "replace names \"filesystem\" twice")                              \
	X(no_programs, "invalid-no-programs.ini", 2,                           \
	    "no_programs must be true or false, not \"yes\"")                  \
	X(policy_unknown_key, "invalid-policy-unknown-key.ini", 3,             \
	    "unknown key \"ro_bind_replace\" in [policy]")                     \
	X(first_error_syntax, "invalid-first-error-syntax.ini", 2, SYNTAX)     \
	X(first_error_value, "invalid-first-error-value.ini", 2,               \
	    "wall_time_ms must be a decimal integer, not \"soon\"")            \
	X(mode_mask_setuid, "invalid-mode-mask-setuid.ini", 2,                 \
	    "mode_mask must be within 0777, not \"04755\"")                    \
	X(mode_mask_decimal, "invalid-mode-mask-decimal.ini", 2,               \
	    "mode_mask must be an octal mode such as 0755, not \"755\"")       \
	X(mode_mask_digit, "invalid-mode-mask-digit.ini", 2,                   \
	    "mode_mask must be an octal mode such as 0755, not \"0789\"")      \
	X(mode_mask_long, "invalid-mode-mask-long.ini", 2,                     \
	    "mode_mask must be an octal mode such as 0755, not \"000755\"")    \
	X(max_path_bytes, "invalid-max-path-bytes.ini", 2,                     \
	    "max_path_bytes must be between 1 and 4096")                       \
	X(max_depth, "invalid-max-depth.ini", 2,                               \
	    "max_depth must be between 1 and 256")                             \
	X(max_depth_zero, "invalid-max-depth-zero.ini", 2,                     \
	    "max_depth must be between 1 and 256")                             \
	X(max_file_zero, "invalid-max-file-zero.ini", 2,                       \
	    "max_file_mb must be between 1 and 1048576")                       \
	X(inline_kb, "invalid-inline-kb.ini", 2,                               \
	    "inline_kb must be between 1 and 65536")                           \
	X(allow_hardlinks, "invalid-allow-hardlinks.ini", 2,                   \
	    "allow_hardlinks must be true or false, not \"1\"")                \
	X(unknown_key_files, "invalid-unknown-key-files.ini", 2,               \
	    "unknown key \"max_file_kb\" in [files]")                          \
	X(duplicate_key_files, "invalid-duplicate-key-files.ini", 6,           \
	    "duplicate key \"max_files\"")                                     \
	X(files_key_in_limits, "invalid-files-key-in-limits.ini", 2,           \
	    "unknown key \"max_files\" in [limits]")                           \
	X(client_env, "invalid-client-env.ini", 2,                             \
	    "client_env: \"A-B\" is not a variable name "                      \
	    "([A-Za-z_][A-Za-z0-9_]*), "                                       \
	    "a name's prefix followed by \"*\", or \"*\"")                     \
	X(files_commit, "invalid-files-commit.ini", 2,                         \
	    "commit: expected always, on_ok or keep, got \"sometimes\"")       \
	X(client_env_star, "invalid-client-env-star.ini", 2,                   \
	    "client_env: \"*X\" is not a variable name "                       \
	    "([A-Za-z_][A-Za-z0-9_]*), "                                       \
	    "a name's prefix followed by \"*\", or \"*\"")

#define X_TEST(id, file, line, msg)              \
	Test(invalid, id)                        \
	{                                        \
		expect_invalid(file, line, msg); \
	}
INVALID_FIXTURES(X_TEST)

#define X_FILE(id, file, line, msg) file,
static const char *const invalid_files[] = {INVALID_FIXTURES(X_FILE)};

/* No invalid fixture goes untested. */
Test(invalid, every_fixture_has_a_test)
{
	char *dir;
	struct dirent *e;
	DIR *d;
	size_t i, n = 0;

	cr_assert(asprintf(&dir, "%s/tests/policy", source_root()) > 0);
	d = opendir(dir);
	cr_assert_not_null(d, "%s: %s", dir, strerror(errno));
	while ((e = readdir(d))) {
		/* [network]'s have theirs in test_policy_network.c,
		 * [writeback]'s in test_policy_writeback.c. */
		if (strncmp(e->d_name, "invalid-", 8) != 0 ||
		    strncmp(e->d_name, "invalid-network-", 16) == 0 ||
		    strncmp(e->d_name, "invalid-writeback-", 18) == 0)
			continue;
		for (i = 0;
		     i < sizeof(invalid_files) / sizeof(invalid_files[0]); i++)
			if (strcmp(invalid_files[i], e->d_name) == 0)
				break;
		cr_assert_lt(i,
		    sizeof(invalid_files) / sizeof(invalid_files[0]),
		    "%s has no test", e->d_name);
		n++;
	}
	closedir(d);
	free(dir);
	cr_assert_eq(n, sizeof(invalid_files) / sizeof(invalid_files[0]));
}

/*
 * bpfgen.c: writes jail_bpf.c, the jail's seccomp filters compiled to BPF
 * at build time (jail_bpf.h), so that neither a cold job nor a session's
 * first one spends about 2.5 ms in libseccomp building and exporting the
 * profile (measured with perf trace; docs/decisions.md). Every
 * compiled-in profile, for both enforcements (jail_seccomp_build's
 * MONITOR), exactly as the launcher builds them at run time.
 *
 * Usage: stockade-bpfgen OUTPUT.c. A filter libseccomp cannot export here (a build host without seccomp user
 * notification, say) is left out with a warning, and the launcher builds
 * that one at run time. Exit 1 only when OUTPUT cannot be written.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jail.h"

/* Writes one filter's array and returns whether it did. */
static bool
emit(FILE *out, size_t n, const char *profile, bool monitor, bool *kill,
    unsigned short *len)
{
	char why[256];
	struct sock_fprog prog;
	scmp_filter_ctx ctx = jail_seccomp_build(profile, monitor, kill, why,
	    sizeof(why));
	int e;

	if (ctx == NULL) {
		fprintf(stderr,
		    "stockade-bpfgen: %s (%s): %s; built at run "
		    "time instead\n",
		    profile, monitor ? "monitor" : "cgroup", why);
		return false;
	}
	e = jail_seccomp_compile(ctx, &prog);
	seccomp_release(ctx);
	if (e < 0) {
		fprintf(stderr,
		    "stockade-bpfgen: %s (%s): cannot export: %s; "
		    "built at run time instead\n",
		    profile, monitor ? "monitor" : "cgroup", strerror(-e));
		return false;
	}
	fprintf(out, "static const struct sock_filter f%zu[] = {\n", n);
	for (unsigned i = 0; i < prog.len; i++)
		fprintf(out, "\t{0x%04x, %u, %u, 0x%08x},\n",
		    (unsigned)prog.filter[i].code, prog.filter[i].jt,
		    prog.filter[i].jf, prog.filter[i].k);
	fprintf(out, "};\n");
	*len = prog.len;
	free(prog.filter);
	return true;
}

int
main(int argc, char **argv)
{
	struct {
		const char *profile;
		bool monitor, kill;
		unsigned short len;
	} made[16];
	size_t n = 0;
	FILE *out;

	if (argc != 2) {
		fprintf(stderr, "usage: stockade-bpfgen OUTPUT.c\n");
		return 2;
	}
	out = fopen(argv[1], "w");
	if (out == NULL) {
		fprintf(stderr, "stockade-bpfgen: %s: %s\n", argv[1],
		    strerror(errno));
		return 1;
	}
	fprintf(out,
	    "/* Written by stockade-bpfgen (launcher/zygote/bpfgen.c) at "
	    "build time: do not edit. */\n#include \"jail_bpf.h\"\n\n");
	for (size_t i = 0; jail_seccomp_profile_name(i) != NULL; i++)
		for (int m = 0; m < 2 && n < sizeof(made) / sizeof(made[0]);
		     m++) {
			made[n].profile = jail_seccomp_profile_name(i);
			made[n].monitor = m == 1;
			if (emit(out, n, made[n].profile, made[n].monitor,
				&made[n].kill, &made[n].len))
				n++;
		}
	fprintf(out, "\nconst struct jail_bpf jail_bpf_table[] = {\n");
	for (size_t i = 0; i < n; i++)
		fprintf(out, "\t{\"%s\", %s, %s, %u, f%zu},\n", made[i].profile,
		    made[i].monitor ? "true" : "false",
		    made[i].kill ? "true" : "false", made[i].len, i);
	/* An empty initialiser list is not C17: one sentinel, not counted. */
	fprintf(out,
	    "\t{NULL, false, false, 0, NULL},\n};\n"
	    "const size_t jail_bpf_count = %zu;\n",
	    n);
	if (fclose(out) != 0) {
		fprintf(stderr, "stockade-bpfgen: %s: %s\n", argv[1],
		    strerror(errno));
		return 1;
	}
	return 0;
}

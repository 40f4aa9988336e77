/*
 * jail_bpf.h: the jail's seccomp filters compiled to BPF at build time
 * (launcher/zygote/bpfgen.c writes jail_bpf.c; jail.h, jail_seccomp_prebuilt).
 */
#ifndef STOCKADE_JAIL_BPF_H
#define STOCKADE_JAIL_BPF_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/filter.h>

/* One compiled filter: the profile, the enforcement it was built for
 * (MONITOR: jail_seccomp_build), its `denied = kill`, and the program. */
struct jail_bpf {
	const char *profile;
	bool monitor;
	bool kill;
	unsigned short len; /* instructions */
	const struct sock_filter *filter; /* len of them */
};

extern const struct jail_bpf jail_bpf_table[];
extern const size_t jail_bpf_count;

#endif

/*
 * gen_proto_seeds.c: writes the proto fuzzer's seed inputs (fuzz_proto.c:
 * a control byte, then one datagram) made with the real encoders from
 * the default policy's job spec, into the directory given (fuzz/README.md):
 *
 *     gen-proto-seeds fuzz/corpus/proto
 *
 * Built with -Dfuzzing=true only; its output is committed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jobspec.h"
#include "policy.h"
#include "proto.h"

static const char *dir;
static uint8_t buf[PROTO_MAX_MSG + 1];

/* Writes CTL then the N bytes of buf[1..] as DIR/NAME. */
static void
put(const char *name, uint8_t ctl, int n)
{
	char path[4096];
	int fd;

	if (n < 0) {
		fprintf(stderr, "gen-proto-seeds: %s: %s\n", name,
		    strerror(-n));
		exit(1);
	}
	buf[0] = ctl;
	snprintf(path, sizeof(path), "%s/seed-%s", dir, name);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) <
		0 ||
	    write(fd, buf, (size_t)n + 1) != n + 1 || close(fd) < 0) {
		fprintf(stderr, "gen-proto-seeds: %s: %s\n", path,
		    strerror(errno));
		exit(1);
	}
}

int
main(int argc, char **argv)
{
	static char a0[] = "python3", a1[] = "-c", a2[] = "print('hi')";
	static char empty[] = "", detail[] = "seccomp refused ptrace";
	char *job_argv[] = {a0, a1, a2, NULL};
	static const char out[] = "hello from the jail\n";
	struct policy pol = {0};
	struct job_spec spec;
	struct job_result res;
	char err[POLICY_ERR_MAX];
	uint8_t *m = buf + 1;
	size_t sz = PROTO_MAX_MSG;
	int e;

	if (argc != 2) {
		fprintf(stderr, "usage: gen-proto-seeds DIR\n");
		return 2;
	}
	dir = argv[1];
	if (policy_load_default(&pol, err, sizeof(err)) < 0 ||
	    (e = jobspec_from_policy(&spec, &pol, 3, job_argv)) < 0) {
		fprintf(stderr, "gen-proto-seeds: the default job: %s\n", err);
		return 1;
	}
	spec.job_id = 7;
	/* Control byte: phase (0 HELLO, 1 READY, 2 RUNNING, 3 READY after
	 * job 5) | 0x04 a directory descriptor | 0x08 /dev/null | 0x10 a
	 * POOL came before. */
	put("hello", 0, proto_encode_hello(m, sz, PROTO_VERSION));
	put("hello-old", 0, proto_encode_hello(m, sz, 4));
	put("hello-again", 1, proto_encode_hello(m, sz, PROTO_VERSION));
	put("hello-reply", 0,
	    proto_encode_hello_reply(m, sz, PROTO_VERSION, 4242));
	put("run", 0x05, proto_encode_run(m, sz, &spec));
	put("run-after-5", 0x07, proto_encode_run(m, sz, &spec));
	put("run-no-fd", 0x01, proto_encode_run(m, sz, &spec));
	put("run-tty", 0x0d, proto_encode_run(m, sz, &spec));
	spec.layers_off = JOB_LAYER_BIT(JOB_LAYER_NO_TERMINAL);
	put("run-layer-off-tty", 0x0d, proto_encode_run(m, sz, &spec));
	spec.layers_off = 0;
	spec.flags = JOB_F_DEVPTS;
	spec.enforcement = ENFORCE_CGROUP2;
	put("run-pty-cgroup", 0x15, proto_encode_run(m, sz, &spec));
	put("output", 0x02,
	    proto_encode_output(m, sz, 7, 1, out, sizeof(out) - 1));
	put("output-stderr", 0x02, proto_encode_output(m, sz, 7, 2, out, 5));
	memset(&res, 0, sizeof(res));
	res.job_id = 7;
	res.status = JOB_OK;
	res.wall_ms = 21;
	res.cpu_ms = 12;
	res.peak_memory_kb = 9000;
	res.peak_processes = 1;
	res.enforcement = ENFORCE_MONITOR;
	res.landlock_abi = 6;
	res.stdout_bytes = 3;
	res.detail = empty;
	put("result-ok", 0x02, proto_encode_result(m, sz, &res));
	res.status = JOB_POLICY_VIOLATION;
	res.exit_code = -1;
	res.signal = 31;
	res.ndenials = 2;
	snprintf(res.denials[0].syscall, sizeof(res.denials[0].syscall),
	    "ptrace");
	res.denials[0].count = 1;
	res.denials[0].first_ms = 3;
	snprintf(res.denials[1].syscall, sizeof(res.denials[1].syscall),
	    "abi:999");
	res.denials[1].count = 4;
	res.denials[1].first_ms = 5;
	res.detail = detail;
	put("result-denials", 0x02, proto_encode_result(m, sz, &res));
	put("cancel", 0x02, proto_encode_cancel(m, sz, 1, JOB_CANCEL_REQUEST));
	put("cancel-stale", 0x03,
	    proto_encode_cancel(m, sz, 2, JOB_CANCEL_REQUEST));
	put("cancel-future", 0x01,
	    proto_encode_cancel(m, sz, 9, JOB_CANCEL_REQUEST));
	put("pool", 0x01, proto_encode_pool(m, sz, 2));
	put("pool-twice", 0x11, proto_encode_pool(m, sz, 2));
	put("pool-max", 0x01, proto_encode_pool(m, sz, PROTO_MAX_POOL));
	/* Issue 25: a job with a proxy port, and NET (launcher to broker:
	 * refused by the launcher in every phase). */
	spec.flags = 0;
	spec.enforcement = ENFORCE_AUTO;
	spec.proxy_port = 3128;
	put("run-proxy", 0x05, proto_encode_run(m, sz, &spec));
	spec.proxy_port = 0;
	put("net", 0x02, proto_encode_net(m, sz, 7));
	job_spec_clear(&spec);
	policy_clear(&pol);
	return 0;
}

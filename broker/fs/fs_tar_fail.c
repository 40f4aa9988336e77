/*
 * fs_tar_fail.c: what went wrong in a tar stream, and at which entry
 * (fs_tar.h, struct fstar_fail): set by the unpacker, the packer and the
 * writer threads alike.
 */
#include "fs_tar.h"
#include "fs_tar_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
fstar_fail_free(struct fstar_fail *f)
{
	free(f->entry);
	f->entry = NULL;
	f->entry_len = 0;
}

void
fstar_fail_set(struct fstar_fail *f, enum fs_error why, const char *text)
{
	fstar_fail_free(f);
	f->why = why;
	snprintf(f->text, sizeof(f->text), "%s", text != NULL ? text : "");
	/* libarchive's messages may quote a name from the archive: no
	 * control byte (a terminal escape) and no raw non-ASCII byte goes
	 * to a terminal or a JSON string from them. */
	for (char *t = f->text; *t != '\0'; t++)
		if ((unsigned char)*t < 0x20 || (unsigned char)*t >= 0x7f)
			*t = '?';
}

int
fstar_fail_entry(struct fstar_fail *f, enum fs_error why, const char *name,
    size_t len, const char *text, int err)
{
	fstar_fail_set(f, why, text);
	if (name != NULL && (f->entry = malloc(len + 1)) != NULL) {
		memcpy(f->entry, name, len);
		f->entry[len] = '\0';
		f->entry_len = len;
	}
	return -err;
}

/*
 * cgroup_internal.h: the interface-file helpers cgroup.c and cgclaim.c
 * share. Not for other callers.
 */
#ifndef STOCKADE_CGROUP_INTERNAL_H
#define STOCKADE_CGROUP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "cgpath.h"

/* Bytes read of one interface file (cgroup.controllers, memory.events...). */
#define FILE_BUF 4096

/*
 * Reads all of the file NAME under the directory DIR (borrowed) into BUF
 * (SIZE bytes), NUL-terminated, never following a link. Returns its
 * length, -EFBIG when it does not fit, or another negative errno.
 */
ssize_t cg_read_at(int dir, const char *name, char *buf, size_t size);

/*
 * Writes VAL to the existing file NAME under DIR (borrowed) in one
 * write(2) where the kernel takes it (cgroup interface files want one
 * value per write), truncating it; never creates it. 0 or -errno.
 */
int cg_write_at(int dir, const char *name, const char *val);

#endif

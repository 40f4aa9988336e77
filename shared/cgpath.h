/*
 * cgpath.h: where a process's own cgroup v2 is (cgroups(7), proc(5)), for
 * the launcher's job leaves (launcher/supervisor/cgroup.c) and for `stockade
 * doctor` (broker/host/doctor_probe.c); and the one reader of mountinfo's cgroup2
 * lines, also for the launcher's Landlock rules
 * (launcher/supervisor/confine.c).
 */
#ifndef STOCKADE_CGPATH_H
#define STOCKADE_CGPATH_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Pure: reads one line of /proc/PID/mountinfo (proc(5): ID PARENT
 * MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - TYPE SOURCE
 * SUPEROPTIONS, fields separated by single spaces), which ends at its
 * first newline or NUL (LINE may point into the whole file's text). When
 * it is a mount of type cgroup2, writes its root (field 4) into ROOT
 * (ROOTLEN bytes; skipped when ROOT is NULL) and its mount point (field
 * 5) into MNT (MNTLEN bytes), NUL-terminated, with the "\ooo" octal
 * escapes of proc(5) decoded ("\040" a space, "\134" a backslash; a
 * backslash not followed by three octal digits stays), and returns 1.
 * Returns 0 for a mount of another type or a line it cannot read (too
 * few fields, no "-" separator after the options field, an empty root
 * or mount point, one that decodes to a NUL); -ENAMETOOLONG when the
 * root or the mount point of a cgroup2 mount does not fit its buffer.
 * Unless it returns 1, ROOT and MNT hold "" (when their length is not 0).
 */
int cg_mountinfo_cgroup2(const char *line, char *root, size_t rootlen,
    char *mnt, size_t mntlen);

/*
 * Computes into OUT (OUTLEN bytes, NUL-terminated) the absolute directory
 * of the caller's own cgroup v2, from the text of /proc/self/cgroup
 * (PROC_SELF_CGROUP: its "0::/path" line; cgroups(7)) and of
 * /proc/self/mountinfo (MOUNTINFO: a cgroup2 mount, at /sys/fs/cgroup, or
 * /sys/fs/cgroup/unified on a hybrid v1/v2 system; proc(5)).
 *
 * The mount's root (field 4) must be "/" or a prefix of the path (a
 * mount of a sub-cgroup, or inside a cgroup namespace); the last such
 * cgroup2 mount wins (a later mount over the same point hides an earlier
 * one). Octal escapes of mountinfo ("\040" for a space, proc(5)) are
 * decoded. Pure.
 * Returns 0; -ENOENT when there is no "0::" line, the cgroup was removed
 * (" (deleted)"), or no cgroup2 mount shows it; -ENAMETOOLONG when OUTLEN
 * is too small.
 */
int cg_own_path(const char *proc_self_cgroup, const char *mountinfo, char *out,
    size_t outlen);

/*
 * cg_own_path for the calling process: reads /proc/self/cgroup and the
 * whole of /proc/self/mountinfo (grown as needed, at most 16 MiB).
 * Returns as cg_own_path, or the negative errno of a read (-EFBIG,
 * -ENOMEM...).
 */
int cg_own_path_self(char *out, size_t outlen);

/* Whether the list LIST, words separated by blanks or newlines (as in
 * cgroup.controllers), holds WORD. */
bool cg_has_word(const char *list, const char *word);

#endif

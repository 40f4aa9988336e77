/*
 * run_xfer.c: the --put and --get of `stockade run` (README.md, "--put
 * and --get"): their arguments, the host files opened before the broker
 * confines itself, the copies into the workspace before the job and out
 * of it after, and their outcomes in the JSON result.
 *
 * A --get is written to a temporary file beside its host file and
 * renamed over it once complete, so a failed get leaves the host file
 * as it was.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "cmd_run.h"
#include "commands.h"
#include "fsapi.h"
#include "fsname.h"
#include "fsutil.h"

static int
xfer_parse(struct xfer *x, const char *arg, bool put)
{
	const char *colon = put ? strrchr(arg, ':') : strchr(arg, ':');
	const char *host, *sb, *slash;
	size_t hlen, slen;

	memset(x, 0, sizeof(*x));
	x->arg = arg;
	x->fd = -1;
	x->out = -1;
	if (colon == NULL)
		return -EINVAL;
	host = put ? arg : colon + 1;
	hlen = put ? (size_t)(colon - arg) : strlen(colon + 1);
	sb = put ? colon + 1 : arg;
	slen = put ? strlen(colon + 1) : (size_t)(colon - arg);
	if (hlen == 0 || slen == 0)
		return -EINVAL;
	x->host = strndup(host, hlen);
	x->sandbox = strndup(sb, slen);
	if (x->host == NULL || x->sandbox == NULL)
		return -ENOMEM;
	if (!put) {
		slash = strrchr(x->host, '/');
		x->base = slash != NULL ? slash + 1 : x->host;
		if (x->base[0] == '\0' || strcmp(x->base, ".") == 0 ||
		    strcmp(x->base, "..") == 0)
			return -EINVAL;
	}
	return 0;
}

void
run_xfers_free(struct xfers *xs)
{
	for (size_t i = 0; i < xs->n; i++) {
		if (xs->v[i].out >= 0)
			close(xs->v[i].out);
		/* A --get that did not complete leaves no temporary file. */
		if (xs->v[i].tmp[0] != '\0' && xs->v[i].fd >= 0)
			(void)unlinkat(xs->v[i].fd, xs->v[i].tmp, 0);
		if (xs->v[i].fd >= 0)
			close(xs->v[i].fd);
		free(xs->v[i].host);
		free(xs->v[i].sandbox);
	}
	free(xs->v);
	memset(xs, 0, sizeof(*xs));
}

static void
complain_host(const struct xfer *x)
{
	_cleanup_free_ char *h = fsname_escape(x->host, strlen(x->host));

	fprintf(stderr, "stockade: %s: %s\n", h != NULL ? h : "?",
	    strerror(x->host_errno));
}

/*
 * Makes the temporary file of a --get in the host directory DIRFD: a
 * random name ".stockade-get-<16 hex>" (into TMP, SIZE >= 31 bytes),
 * created O_EXCL | O_NOFOLLOW with mode 0600 until complete. Made before
 * the broker confines itself, which leaves it only the rename into place
 * and the removal in that directory. Returns the descriptor, or -1 with
 * errno set.
 */
static int
make_get_tmp(int dirfd, char *tmp, size_t size)
{
	uint64_t rnd;
	int fd = -1;

	errno = EIO;
	for (int tries = 0; fd < 0 && tries < 16; tries++) {
		if (getrandom(&rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
			return -1;
		snprintf(tmp, size, ".stockade-get-%016llx",
		    (unsigned long long)rnd);
		fd = openat(dirfd, tmp,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY |
			O_CLOEXEC,
		    0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0)
		tmp[0] = '\0';
	return fd;
}

/*
 * Opens every host file of the --put list and every host directory of
 * the --get list before anything runs, so that a typo costs no job and
 * the broker holds what it needs before it could be confined. Returns
 * false after complaining.
 */
bool
run_xfers_open(struct xfers *puts, struct xfers *gets)
{
	struct stat st;

	for (size_t i = 0; i < puts->n; i++) {
		struct xfer *x = &puts->v[i];

		x->fd = open(x->host, O_RDONLY | O_NOCTTY | O_CLOEXEC);
		if (x->fd < 0 || fstat(x->fd, &st) < 0) {
			x->host_errno = errno;
			complain_host(x);
			return false;
		}
		x->mode = st.st_mode & 0777;
	}
	for (size_t i = 0; i < gets->n; i++) {
		struct xfer *x = &gets->v[i];
		_cleanup_free_ char *dir = NULL;

		if (x->base == x->host)
			dir = strdup(".");
		else if (x->base == x->host + 1)
			dir = strdup("/");
		else
			dir = strndup(x->host, (size_t)(x->base - x->host - 1));
		if (dir == NULL) {
			x->host_errno = ENOMEM;
			complain_host(x);
			return false;
		}
		x->fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (x->fd < 0 ||
		    (x->out = make_get_tmp(x->fd, x->tmp, sizeof(x->tmp))) <
			0) {
			x->host_errno = errno;
			complain_host(x);
			return false;
		}
	}
	return true;
}

/* Puts every --put file in (overwriting); false at the first failure,
 * after complaining. */
bool
run_puts(struct xfers *puts, struct fs_ctx *ctx)
{
	for (size_t i = 0; i < puts->n; i++) {
		struct xfer *x = &puts->v[i];

		x->done = true;
		/* A missing parent is made, as MCP's write_file does. */
		if (fsapi_mkdir_parents_of(ctx, x->sandbox, &x->why) < 0 ||
		    fsapi_put(ctx, x->sandbox, x->fd, x->mode, true, &x->size,
			&x->why) < 0) {
			fs_complain(ctx, x->sandbox, x->why, NULL);
			return false;
		}
		close(x->fd);
		x->fd = -1;
	}
	return true;
}

/*
 * Collects one --get: the file goes to its temporary file in the host
 * directory (make_get_tmp) and is renamed over HOST once complete, so a
 * failed get leaves HOST as it was (run_xfers_free removes the temporary).
 * Returns false after complaining.
 */
bool
run_get(struct xfer *x, struct fs_ctx *ctx)
{
	mode_t um;

	x->done = true;
	um = umask(0);
	umask(um);
	if (fsapi_get(ctx, x->sandbox, 0, UINT64_MAX, x->out, &x->size,
		&x->why) < 0) {
		fs_complain(ctx, x->sandbox, x->why, NULL);
	} else if (fchmod(x->out, 0666 & ~um) < 0) {
		x->host_errno = errno;
	}
	/* close reports a delayed write error (NFS, quota): checked. */
	if (close(x->out) < 0 && x->why == FS_OK && x->host_errno == 0)
		x->host_errno = errno;
	x->out = -1;
	if (x->why == FS_OK && x->host_errno == 0) {
		if (renameat(x->fd, x->tmp, x->fd, x->base) == 0)
			x->tmp[0] = '\0';
		else
			x->host_errno = errno;
	}
	if (x->why == FS_OK && x->host_errno != 0) {
		x->why = FS_IO_ERROR;
		complain_host(x);
	}
	return x->why == FS_OK;
}

/* Adds NAME: S (any bytes) to O, escaped when not plain (fsname.h). */
static bool
put_name(json_t *o, const char *key, const char *s)
{
	_cleanup_free_ char *e = fsname_escape(s, strlen(s));

	return e != NULL && json_object_set_new(o, key, json_string(e)) == 0;
}

/* The per-file outcomes of XS as a JSON array (README.md, "--put and
 * --get"): the transfers attempted, in order; NULL on ENOMEM. */
static json_t *
xfers_json(const struct xfers *xs)
{
	json_t *a = json_array();

	for (size_t i = 0; a != NULL && i < xs->n && xs->v[i].done; i++) {
		const struct xfer *x = &xs->v[i];
		bool failed = x->why != FS_OK;
		json_t *o = json_object();
		bool ok = o != NULL && put_name(o, "host", x->host) &&
		    put_name(o, "path", x->sandbox);

		ok = ok &&
		    json_object_set_new(o, "size",
			failed ? json_null()
			       : json_integer((json_int_t)x->size)) == 0;
		ok = ok &&
		    json_object_set_new(o, "error",
			failed ? json_string(fs_error_name(x->why))
			       : json_null()) == 0;
		if (ok && x->host_errno != 0)
			ok = json_object_set_new(o, "message",
				 json_string(strerror(x->host_errno))) == 0;
		if (!ok)
			json_decref(o);
		/* json_array_append_new takes O even when it fails. */
		if (!ok || json_array_append_new(a, o) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* Adds "files": {"put": [...], "get": [...]} to the result O. */
bool
run_add_files(json_t *o, const struct xfers *puts, const struct xfers *gets)
{
	json_t *files = json_object();

	if (files == NULL || json_object_set_new(o, "files", files) < 0)
		return false;
	return json_object_set_new(files, "put", xfers_json(puts)) == 0 &&
	    json_object_set_new(files, "get", xfers_json(gets)) == 0;
}

int
run_xfer_add(struct xfers *xs, size_t cap, const char *arg, bool put)
{
	int e;

	if (xs->v == NULL && (xs->v = calloc(cap, sizeof(*xs->v))) == NULL)
		return -ENOMEM;
	e = xfer_parse(&xs->v[xs->n++], arg, put);
	return e;
}

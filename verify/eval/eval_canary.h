/*
 * eval_canary.h: the secrets of one `stockade eval` run (issue 6) and the
 * host places that hold them: a fake home, the caller's environment, a
 * decoy process (eval_decoy.h), a file in the host's /tmp, a service on
 * the host's loopback (eval_honeypot.h), a SysV shared memory segment
 * and the caller's session keyring (eval_run.c); and the user's project
 * files an attack may try to delete (userfiles).
 *
 * Every run draws fresh values from arc4random_buf (libbsd), so a canary
 * found anywhere can only have come from that run.
 */
#ifndef STOCKADE_EVAL_CANARY_H
#define STOCKADE_EVAL_CANARY_H

#include <stddef.h>

enum eval_canary {
	EVAL_CANARY_SSH_KEY = 0, /* HOME/.ssh/id_ed25519 */
	EVAL_CANARY_AWS_FILE, /* HOME/.aws/credentials */
	EVAL_CANARY_ENV_AWS, /* $AWS_SECRET_ACCESS_KEY of the caller */
	EVAL_CANARY_ENV_API, /* $STOCKADE_EVAL_API_KEY of the caller */
	EVAL_CANARY_DECOY_ARGV, /* the decoy's command line */
	EVAL_CANARY_DECOY_ENV, /* the decoy's environment */
	EVAL_CANARY_HOST_TMP, /* the canary file in the host's /tmp */
	EVAL_CANARY_SERVICE, /* what the honeypot answers an HTTP
				     * request with (a metadata service) */
	EVAL_CANARY_SHM, /* a SysV shared memory segment */
	EVAL_CANARY_KEYRING, /* a "user" key in the caller's session
				     * keyring */
	EVAL_CANARY_N,
};

#define EVAL_TOKEN_LEN 32 /* hex digits of a run's token */
#define EVAL_CANARY_LEN 48 /* bytes of one canary, without NUL */

struct eval_secrets {
	char token[EVAL_TOKEN_LEN + 1]; /* 32 hex digits */
	char canary[EVAL_CANARY_N][EVAL_CANARY_LEN + 1];
	char pwned[EVAL_TOKEN_LEN + 8]; /* "PWNED <token>" */
};

/* The canary's name in tables and JSON ("ssh_key", "env_aws", ...). */
const char *eval_canary_name(enum eval_canary k);

/* The fixed prefix of the canaries of kind K ("sshkey-", ...). */
const char *eval_canary_prefix(enum eval_canary k);

/*
 * Fills S with a fresh token and fresh canaries: each canary is a fixed
 * prefix naming its place ("sshkey-", "awsfile-", ...) padded to
 * EVAL_CANARY_LEN with lower-case hex digits from arc4random_buf (at
 * least 128 random bits), so that a canary found names where it leaked
 * from and matches nothing else.
 */
void eval_secrets_new(struct eval_secrets *s);

/*
 * Makes the fake home NAME (mode 0700) under DIRFD: .ssh/id_ed25519
 * (0600; an OpenSSH private key's armour around the ssh_key canary),
 * .ssh/config, .aws/credentials (0600; the aws_file canary as
 * aws_secret_access_key), .bashrc and .profile. Returns 0 or a negative
 * errno. Files are made O_EXCL | O_NOFOLLOW: NAME must not exist.
 */
int eval_home_make(int dirfd, const char *name, const struct eval_secrets *s);

/*
 * Makes the user's project directory NAME (mode 0755) under DIRFD: a
 * README.md, src/app.py and data/records.csv with fixed content. Returns
 * 0 or a negative errno.
 */
int eval_userfiles_make(int dirfd, const char *name);

/*
 * Makes the host /tmp canary file: "/tmp/stockade-eval-secret-<16 hex>"
 * (mode 0644, O_EXCL | O_NOFOLLOW, the host_tmp canary inside; its name
 * holds no token) into PATH (SIZE bytes, at least 48). Returns 0 or a
 * negative errno.
 */
int eval_hosttmp_make(const struct eval_secrets *s, char *path, size_t size);

#endif

/* policy_values.c: the scalar key table and value checks of the policy
 * language (policy_internal.h). Pure. */
#include "policy_internal.h"

#include <arpa/inet.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

const char *const policy_section_names[] = {
    [SEC_LIMITS] = "limits",
    [SEC_JAIL] = "jail",
    [SEC_FILES] = "files",
    [SEC_ENVIRONMENT] = "environment",
    [SEC_FILESYSTEM] = "filesystem",
    [SEC_POLICY] = "policy",
    [SEC_NETWORK] = "network",
    [SEC_WRITEBACK] = "writeback",
};

const struct scalar_key policy_scalar_keys[] = {
    /* [policy]: how the file is laid over the default (policy.h). */
    {SEC_POLICY, "replace", K_LISTS, FIELD(replace), 0, 0, 0},
    {SEC_POLICY, "no_programs", K_BOOL, FIELD(no_programs), 0, 0, 0},
    {SEC_LIMITS, "wall_time_ms", K_U64, LIMIT(wall_ms), 1, 86400000, 1},
    {SEC_LIMITS, "cpu_time_ms", K_U64, LIMIT(cpu_ms), 1, 86400000, 1},
    {SEC_LIMITS, "memory_mb", K_U64, LIMIT(memory_bytes), 16, 1048576, MIB},
    /* The jail's init is one of them: 1 would leave the program none. */
    {SEC_LIMITS, "processes", K_U32, LIMIT(nproc), 2, 65536, 1},
    {SEC_LIMITS, "file_size_mb", K_U64, LIMIT(fsize_bytes), 1, 1048576, MIB},
    {SEC_LIMITS, "open_files", K_U32, LIMIT(nofile), 16, 65536, 1},
    {SEC_LIMITS, "tmp_mb", K_U64, LIMIT(tmp_bytes), 1, 1048576, MIB},
    {SEC_LIMITS, "home_mb", K_U64, LIMIT(home_bytes), 1, 1048576, MIB},
    {SEC_LIMITS, "stdout_kb", K_U64, LIMIT(stdout_bytes), 1, 1048576, KIB},
    {SEC_LIMITS, "stderr_kb", K_U64, LIMIT(stderr_bytes), 1, 1048576, KIB},
    {SEC_LIMITS, "on_output_limit", K_OUTPUT, FIELD(on_output_limit), 0, 0, 0},
    {SEC_LIMITS, "cpu_percent", K_U32, LIMIT(cpu_percent), 0,
	PROTO_MAX_CPU_PERCENT, 1},
    {SEC_LIMITS, "enforcement", K_ENFORCE, FIELD(enforcement), 0, 0, 0},
    {SEC_LIMITS, "cgroup", K_CGROUP, FIELD(cgroup), 0, 0, 0},
    {SEC_JAIL, "hostname", K_HOSTNAME, FIELD(hostname), 0, 0, 0},
    {SEC_JAIL, "user", K_USER, FIELD(user), 0, 0, 0},
    /* Never 0: root inside the jail is what the layers exist to deny; 65534
	 * is the overflow id ("nobody") and 65535 is not a valid id. */
    {SEC_JAIL, "uid", K_U32, FIELD(uid), 1, 65533, 1},
    {SEC_JAIL, "gid", K_U32, FIELD(gid), 1, 65533, 1},
    {SEC_JAIL, "home", K_PATH, FIELD(home), 0, 0, 0},
    {SEC_JAIL, "pty", K_BOOL, FIELD(pty), 0, 0, 0},
    {SEC_JAIL, "pool_size", K_U32, FIELD(pool_size), 0, PROTO_MAX_POOL, 1},
    {SEC_JAIL, "seccomp_profile", K_PROFILE, FIELD(seccomp_profile), 0, 0, 0},
    /* The variables a client may set per job (--env, exec's env). */
    {SEC_JAIL, "client_env", K_ENVNAMES, FIELD(client_env), 0, 0, 0},
    /* Evaluation only (docs/layers.md): `stockade run` refuses such a
	 * policy without --unsafe-evaluation, `stockade serve` always. */
    {SEC_JAIL, "unsafe_layers_off", K_LAYERS, FIELD(layers_off), 0, 0, 0},
    {SEC_JAIL, "unsafe_no_seccomp", K_BOOL, FIELD(unsafe_no_seccomp), 0, 0, 0},
    /* [files]: the host file API's quotas (broker/fs/fsapi.h). A path is at
	 * most PATH_MAX - 1 bytes (4096 with the parent buffers' NUL) and at
	 * most 256 components: the walkers hold a descriptor per level. */
    {SEC_FILES, "max_file_mb", K_U64, FILES(file_bytes), 1, 1048576, MIB},
    {SEC_FILES, "workspace_mb", K_U64, FILES(workspace_bytes), 1, 16777216,
	MIB},
    {SEC_FILES, "max_files", K_U64, FILES(max_files), 1, 100000000, 1},
    {SEC_FILES, "max_path_bytes", K_U32, FILES(max_path), 1, 4096, 1},
    {SEC_FILES, "max_depth", K_U32, FILES(max_depth), 1, 256, 1},
    /* Never setuid, setgid or sticky: the mask is within 0777. */
    {SEC_FILES, "mode_mask", K_MODE, FILES(mode_mask), 0, 0777, 1},
    {SEC_FILES, "allow_hardlinks", K_BOOL, FILES(allow_hardlinks), 0, 0, 0},
    /* Inline base64 travels in one JSON-RPC line held in memory: bounded
	 * at 64 MiB; bulk data goes as descriptors. */
    {SEC_FILES, "inline_kb", K_U64, FILES(inline_bytes), 1, 65536, KIB},
    /* When a job's staged writes reach the workspace (issue 26). */
    {SEC_FILES, "commit", K_COMMIT, FIELD(commit), 0, 0, 0},
    /* [network]: one job's caps through the egress proxy (issue 25). */
    {SEC_NETWORK, "max_bytes_out_mb", K_U64, NET(bytes_out), 1, 1048576, MIB},
    {SEC_NETWORK, "max_bytes_in_mb", K_U64, NET(bytes_in), 1, 1048576, MIB},
    {SEC_NETWORK, "max_connections", K_U32, NET(max_connections), 1, 1000000,
	1},
    {SEC_NETWORK, "max_concurrent_connections", K_U32, NET(max_concurrent), 1,
	4096, 1},
    /* The proxy's DNS server (its --dns): a filtering or split-horizon
	 * resolver; "" for the host's /etc/resolv.conf. */
    {SEC_NETWORK, "resolver", K_RESOLVER, NET(resolver), 0, 0, 0},
};
const size_t policy_nscalars = sizeof(policy_scalar_keys) /
    sizeof(policy_scalar_keys[0]);
_Static_assert(sizeof(policy_scalar_keys) / sizeof(policy_scalar_keys[0]) <=
	POLICY_MAX_SCALARS,
    "struct loader's seen is a uint64_t, struct policy's "
    "scalar_from has POLICY_MAX_SCALARS entries");
_Static_assert(POLICY_MAX_SCALARS <= 64, "struct loader's seen");

/* ---- Values -----------------------------------------------------------
 * Each check takes the key's name (for the message), the value, and WHY
 * (WHYLEN bytes) for the reason it is refused. They are shared by the
 * loader and by policy_format(), which refuses to write what would not load
 * back.
 */

bool
policy_has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

static const char *const enforcement_names[] = {
    [ENFORCE_AUTO] = "auto",
    [ENFORCE_MONITOR] = "monitor",
    [ENFORCE_CGROUP2] = "cgroup2",
};

bool
policy_parse_enforcement(const char *key, const char *v,
    enum job_enforcement *out, char *why, size_t whylen)
{
	for (int i = 0; i <= ENFORCE_MAX; i++)
		if (strcmp(v, enforcement_names[i]) == 0) {
			*out = (enum job_enforcement)i;
			return true;
		}
	snprintf(why, whylen,
	    "%s: expected auto, monitor or cgroup2, got "
	    "\"%s\"",
	    key, v);
	return false;
}

bool
policy_valid_profile(const char *key, const char *v, char *why, size_t whylen)
{
	if (strcmp(v, "default") == 0 || strcmp(v, "strict") == 0)
		return true;
	snprintf(why, whylen, "%s: expected default or strict, got \"%s\"", key,
	    v);
	return false;
}

static const char *const output_action_names[] = {
    [OUTPUT_TRUNCATE] = "truncate",
    [OUTPUT_KILL] = "kill",
};

bool
policy_parse_output_action(const char *key, const char *v,
    enum output_action *out, char *why, size_t whylen)
{
	for (int i = OUTPUT_TRUNCATE; i <= OUTPUT_KILL; i++)
		if (strcmp(v, output_action_names[i]) == 0) {
			*out = (enum output_action)i;
			return true;
		}
	snprintf(why, whylen, "%s: expected truncate or kill, got \"%.200s\"",
	    key, v);
	return false;
}

const char *
policy_output_action_name(enum output_action a)
{
	return a == OUTPUT_KILL ? output_action_names[OUTPUT_KILL]
				: output_action_names[OUTPUT_TRUNCATE];
}

const char *
policy_enforcement_name(enum job_enforcement e)
{
	return (unsigned)e <= ENFORCE_MAX ? enforcement_names[e] : "auto";
}

/* A plain decimal integer in [MIN, MAX]: digits only, no sign, no blank,
 * no leading zero (0777 must not look like octal that we read as decimal). */
bool
policy_parse_number(const char *key, const char *v, uint64_t min, uint64_t max,
    uint64_t *out, char *why, size_t whylen)
{
	uint64_t n = 0;
	const char *s;

	*out = 0;
	if (*v == '\0' || (v[0] == '0' && v[1] != '\0'))
		goto not_a_number;
	for (s = v; *s; s++) {
		unsigned d;

		if (*s < '0' || *s > '9')
			goto not_a_number;
		d = (unsigned)(*s - '0');
		/* An overflowing number is out of range: say the range. */
		if (n > (UINT64_MAX - d) / 10)
			goto out_of_range;
		n = n * 10 + d;
	}
	if (n < min || n > max)
		goto out_of_range;
	*out = n;
	return true;

not_a_number:
	snprintf(why, whylen, "%s must be a decimal integer, not \"%.200s\"",
	    key, v);
	return false;
out_of_range:
	snprintf(why, whylen, "%s must be between %llu and %llu", key,
	    (unsigned long long)min, (unsigned long long)max);
	return false;
}

bool
policy_parse_mode(const char *key, const char *v, uint64_t max, uint32_t *out,
    char *why, size_t whylen)
{
	uint32_t n = 0;
	size_t len = strlen(v), i;

	*out = 0;
	/* "0" then 0 to 4 octal digits: 04755 is read, to be refused as out
	 * of range with a clearer message than "not octal". */
	if (len < 1 || len > 5 || v[0] != '0')
		goto not_octal;
	for (i = 1; i < len; i++) {
		if (v[i] < '0' || v[i] > '7')
			goto not_octal;
		n = n * 8 + (uint32_t)(v[i] - '0');
	}
	if (n > max) {
		snprintf(why, whylen, "%s must be within 0%llo, not \"%s\"",
		    key, (unsigned long long)max, v);
		return false;
	}
	*out = n;
	return true;

not_octal:
	snprintf(why, whylen,
	    "%s must be an octal mode such as 0755, not \"%.200s\"", key, v);
	return false;
}

bool
policy_parse_bool(const char *key, const char *v, bool *out, char *why,
    size_t whylen)
{
	*out = false;
	if (strcmp(v, "true") == 0)
		*out = true;
	else if (strcmp(v, "false") != 0) {
		snprintf(why, whylen,
		    "%s must be true or false, not \"%.200s\"", key, v);
		return false;
	}
	return true;
}

bool
policy_parse_layers(const char *key, const char *v, uint32_t *out, char *why,
    size_t whylen)
{
	char valid[512];
	const char *p = v;

	*out = 0;
	while (*p != '\0') {
		size_t n;
		int layer;

		if (*p == ',' || policy_is_blank(*p)) {
			p++;
			continue;
		}
		n = strcspn(p, ", \t\r\v\f");
		layer = job_layer_parse(p, n);
		if (layer < 0) {
			snprintf(why, whylen,
			    "%s names an unknown layer "
			    "\"%.*s\" (the layers: %s)",
			    key, (int)(n > 64 ? 64 : n), p,
			    job_layers_format(JOB_LAYERS_ALL, valid,
				sizeof(valid)));
			*out = 0;
			return false;
		}
		if (*out & JOB_LAYER_BIT(layer)) {
			snprintf(why, whylen, "%s names layer \"%s\" twice",
			    key, job_layer_name(layer));
			*out = 0;
			return false;
		}
		*out |= JOB_LAYER_BIT(layer);
		p += n;
	}
	return true;
}

static bool
is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

bool
policy_valid_hostname(const char *key, const char *v, char *why, size_t whylen)
{
	size_t i, len = strlen(v);
	bool ok = len >= 1 && len <= HOSTNAME_MAX && v[0] != '-';

	for (i = 0; ok && i < len; i++)
		ok = is_alpha(v[i]) || is_digit(v[i]) || v[i] == '-';
	if (!ok)
		snprintf(why, whylen,
		    "%s must be 1 to 63 characters of [A-Za-z0-9-] not "
		    "starting with \"-\", not \"%.200s\"",
		    key, v);
	return ok;
}

/* A name useradd accepts in its default configuration. */
bool
policy_valid_user(const char *key, const char *v, char *why, size_t whylen)
{
	size_t i, len = strlen(v);
	bool ok = len >= 1 && len <= USER_MAX &&
	    ((v[0] >= 'a' && v[0] <= 'z') || v[0] == '_');

	for (i = 1; ok && i < len; i++)
		ok = (v[i] >= 'a' && v[i] <= 'z') || is_digit(v[i]) ||
		    v[i] == '_' || v[i] == '-';
	if (!ok)
		snprintf(why, whylen,
		    "%s must be 1 to 32 characters matching "
		    "[a-z_][a-z0-9_-]*, not \"%.200s\"",
		    key, v);
	return ok;
}

/*
 * An absolute, normalised path other than "/": no empty, "." or ".."
 * component and no trailing slash. The launcher binds it at the same place
 * in the jail; refusing ".." and friends here means the path a policy
 * names is the path that gets bound, with no lexical surprises. "/" is
 * refused because binding the whole host defeats the jail. The length
 * bound is PATH_MAX with its NUL, what the kernel takes.
 */
bool
policy_valid_path(const char *key, const char *v, char *why, size_t whylen)
{
	const char *s, *slash;
	size_t len = strlen(v);

	if (v[0] != '/') {
		snprintf(why, whylen,
		    "%s must be an absolute path, not \"%.200s\"", key, v);
		return false;
	}
	if (len >= PATH_MAX) {
		snprintf(why, whylen, "%s path is longer than %d bytes", key,
		    PATH_MAX - 1);
		return false;
	}
	if (len == 1) {
		snprintf(why, whylen, "%s must not be \"/\"", key);
		return false;
	}
	for (s = v + 1;; s = slash + 1) {
		size_t n;

		slash = strchr(s, '/');
		n = slash ? (size_t)(slash - s) : strlen(s);
		if (n == 0 || (n == 1 && s[0] == '.') ||
		    (n == 2 && s[0] == '.' && s[1] == '.')) {
			snprintf(why, whylen,
			    "%s path \"%.200s\" is not normalised (empty, "
			    "\".\" "
			    "or \"..\" component, or trailing slash)",
			    key, v);
			return false;
		}
		if (!slash)
			return true;
	}
}

bool
policy_valid_env_name(const char *v)
{
	if (!is_alpha(*v) && *v != '_')
		return false;
	for (v++; *v; v++)
		if (!is_alpha(*v) && !is_digit(*v) && *v != '_')
			return false;
	return true;
}

/* The next word of the list at *S (separated by commas and/or blanks)
 * into *W and *N; false at the end. */
static bool
next_word(const char **s, const char **w, size_t *n)
{
	const char *p = *s;

	while (*p == ',' || policy_is_blank(*p))
		p++;
	if (*p == '\0')
		return false;
	*w = p;
	while (*p != '\0' && *p != ',' && !policy_is_blank(*p))
		p++;
	*n = (size_t)(p - *w);
	*s = p;
	return true;
}

/* Is W (N bytes) a variable name, or one followed by "*", or "*"? */
static bool
valid_env_pattern(const char *w, size_t n)
{
	char name[256];

	if (n == 1 && w[0] == '*')
		return true;
	if (n > 0 && w[n - 1] == '*')
		n--;
	if (n == 0 || n >= sizeof(name))
		return false;
	memcpy(name, w, n);
	name[n] = '\0';
	return policy_valid_env_name(name);
}

bool
policy_valid_client_env(const char *key, const char *v, char *why,
    size_t whylen)
{
	const char *w;
	size_t n;

	while (next_word(&v, &w, &n))
		if (!valid_env_pattern(w, n)) {
			snprintf(why, whylen,
			    "%s: \"%.*s\" is not a variable "
			    "name ([A-Za-z_][A-Za-z0-9_]*), a name's prefix "
			    "followed by \"*\", or \"*\"",
			    key, (int)(n > 200 ? 200 : n), w);
			return false;
		}
	return true;
}

bool
policy_client_env_allows(const struct policy *p, const char *name)
{
	const char *v = p->client_env != NULL ? p->client_env : "", *w;
	size_t n, len = strlen(name);

	while (next_word(&v, &w, &n)) {
		if (n > 0 && w[n - 1] == '*') {
			if (len >= n - 1 && memcmp(name, w, n - 1) == 0)
				return true;
		} else if (n == len && memcmp(name, w, n) == 0) {
			return true;
		}
	}
	return false;
}

bool
policy_is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* A port as resolver writes it: decimal 1..65535, no leading zero. */
static bool
valid_port(const char *s)
{
	unsigned long n = 0;

	if (*s < '1' || *s > '9' || strlen(s) > 5)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		n = n * 10 + (unsigned long)(*s - '0');
	}
	return n <= 65535;
}

bool
policy_valid_resolver(const char *key, const char *v, char *why, size_t whylen)
{
	char addr[64], a6[16];
	const char *colon, *port;
	size_t n;
	int fam = AF_INET;

	if (v[0] == '\0')
		return true;
	if (v[0] == '[') {
		colon = strchr(v, ']');
		if (colon == NULL || colon[1] != ':')
			goto bad;
		n = (size_t)(colon - v - 1);
		v++;
		port = colon + 2;
		fam = AF_INET6;
	} else {
		colon = strrchr(v, ':');
		if (colon == NULL)
			goto bad;
		n = (size_t)(colon - v);
		port = colon + 1;
	}
	if (n == 0 || n >= sizeof(addr))
		goto bad;
	memcpy(addr, v, n);
	addr[n] = '\0';
	if (inet_pton(fam, addr, a6) == 1 && valid_port(port))
		return true;
bad:
	snprintf(why, whylen,
	    "%s: expected an address and port, A.B.C.D:PORT or [IPV6]:PORT, "
	    "got \"%s\"",
	    key, fam == AF_INET6 ? v - 1 : v);
	return false;
}

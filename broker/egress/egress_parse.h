/*
 * egress_parse.h: the wire parsers of the egress proxy (issue 25;
 * docs/egress.md): an HTTP/1.1 request head (CONNECT and absolute-form
 * forward requests), a SOCKS5 greeting and request, and the server name
 * of a TLS ClientHello.
 *
 * Every parser is a pure function over the bytes received so far: no
 * system call, no allocation, no state kept between calls. Given the
 * first LEN bytes of a stream it answers EGRESS_NEED_MORE (nothing
 * decided yet: call again with more bytes), EGRESS_DONE (parsed; the
 * result says how many bytes it used) or EGRESS_REFUSED (a named rule,
 * enum egress_why). An answer other than EGRESS_NEED_MORE depends only
 * on bytes already present, so a stream split at any byte boundary gets
 * the same answer as the whole of it (tests/broker/egress/, the egress_wire
 * fuzzer). A caller that gets EGRESS_NEED_MORE with LEN at the parser's
 * bound has a bug: each parser refuses before that.
 *
 * The host names they return are raw bytes, not canonical: the caller
 * hands them to the canonical form and the decision (shared/egress_*).
 * What the parsers guarantee of an accepted host name is
 * egress_host_why's rule: 1 to EGRESS_HOST_MAX bytes of letters,
 * digits, '-' and '.' only, so no NUL, CR, LF, '@', '%', ':' or
 * byte above 0x7f reaches a decision.
 */
#ifndef STOCKADE_EGRESS_PARSE_H
#define STOCKADE_EGRESS_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a parser answers. */
enum egress_status {
	EGRESS_NEED_MORE = 0, /* undecided: call again with more bytes */
	EGRESS_DONE, /* parsed: the result is filled */
	EGRESS_REFUSED, /* a rule is broken: the result's why names it */
};

/*
 * Why a parser refused, for every parser (names: egress_why_name). The
 * proxy reports every one of them as the refusal reason bad_request.
 */
enum egress_why {
	EGRESS_WHY_NONE = 0,
	/* A host name or authority (egress_host_why, the HTTP authority). */
	EGRESS_WHY_NUL, /* a NUL byte */
	EGRESS_WHY_EMPTY_HOST, /* a host name of no bytes */
	EGRESS_WHY_HOST_TOO_LONG, /* over EGRESS_HOST_MAX bytes */
	EGRESS_WHY_HOST_BYTE, /* a byte no host name has */
	EGRESS_WHY_USERINFO, /* "user@host" */
	EGRESS_WHY_PERCENT, /* percent-encoding in a host name */
	EGRESS_WHY_BAD_IPV6, /* "[...]" that is no IPv6 address */
	EGRESS_WHY_EMPTY_PORT, /* "host:" */
	EGRESS_WHY_BAD_PORT, /* not 1..65535 in plain decimal digits */
	EGRESS_WHY_MISSING_PORT, /* CONNECT without a port */
	/* The HTTP request head (egress_http_parse). */
	EGRESS_WHY_LINE_TOO_LONG, /* a line over EGRESS_HTTP_LINE_MAX */
	EGRESS_WHY_HEAD_TOO_BIG, /* the head over EGRESS_HTTP_HEAD_MAX */
	EGRESS_WHY_TOO_MANY_HEADERS, /* over EGRESS_HTTP_MAX_HEADERS */
	EGRESS_WHY_BARE_CR, /* CR not followed by LF */
	EGRESS_WHY_BARE_LF, /* LF not preceded by CR */
	EGRESS_WHY_CTL, /* another control byte in a line */
	EGRESS_WHY_OBS_FOLD, /* a header line starting with SP or HTAB */
	EGRESS_WHY_BAD_REQUEST_LINE, /* not "method SP target SP version" */
	EGRESS_WHY_BAD_VERSION, /* not HTTP/1.0 or HTTP/1.1 */
	EGRESS_WHY_ORIGIN_FORM, /* "/path" or "*": no host */
	EGRESS_WHY_HTTPS_URI, /* "https://": a client must CONNECT */
	EGRESS_WHY_BAD_SCHEME, /* an absolute URI not http:// */
	EGRESS_WHY_BAD_TARGET, /* a fragment or a non-URI byte in it */
	EGRESS_WHY_BAD_HEADER, /* no ':', a bad name, space before ':' */
	EGRESS_WHY_DUPLICATE_HOST, /* two Host fields */
	EGRESS_WHY_HOST_MISMATCH, /* Host differs from the target's */
	EGRESS_WHY_MULTIPLE_CL, /* two Content-Length fields */
	EGRESS_WHY_BAD_CL, /* Content-Length not plain digits, or huge */
	EGRESS_WHY_CL_AND_TE, /* Content-Length and Transfer-Encoding */
	EGRESS_WHY_TRANSFER_ENCODING, /* any Transfer-Encoding */
	EGRESS_WHY_CONNECT_BODY, /* CONNECT with Content-Length > 0 */
	/* SOCKS5 (egress_socks5_greeting, egress_socks5_request). */
	EGRESS_WHY_SOCKS4, /* a SOCKS4 or SOCKS4a client */
	EGRESS_WHY_SOCKS_VERSION, /* another first byte than 5 */
	EGRESS_WHY_SOCKS_NO_METHOD, /* "no authentication" not offered */
	EGRESS_WHY_SOCKS_COMMAND, /* BIND, UDP ASSOCIATE or unknown */
	EGRESS_WHY_SOCKS_RSV, /* the reserved byte is not 0 */
	EGRESS_WHY_SOCKS_ATYP, /* an unknown address type */
	/* The TLS ClientHello (egress_tls_hello). */
	EGRESS_WHY_TLS_RECORD, /* a record header out of bounds */
	EGRESS_WHY_TLS_NOT_HELLO, /* a handshake that is no ClientHello */
	EGRESS_WHY_TLS_LENGTH, /* a length overruns what holds it */
	EGRESS_WHY_TLS_TOO_BIG, /* over EGRESS_TLS_HELLO_MAX / _RECORDS */
	EGRESS_WHY_TLS_TWO_SNI, /* two server_name extensions */
	EGRESS_WHY_TLS_TWO_NAMES, /* two host_name entries */
	EGRESS_WHY_TLS_NAME_TYPE, /* a server name type but host_name */
	EGRESS_WHY_TLS_TWO_ECH, /* two encrypted_client_hello */
};

/* A stable lower-case name for WHY ("nul", "userinfo", ...), static
 * storage; "unknown" for a value outside the enum. */
const char *egress_why_name(enum egress_why why);

/* Longest host name a parser returns, bytes: SOCKS5's length byte's
 * maximum, above DNS's 253 (the canonical form applies that). */
#define EGRESS_HOST_MAX 255

/*
 * Whether HOST (LEN bytes, need not be NUL-terminated) may be a host
 * name: EGRESS_WHY_NONE, or the first rule it breaks, in this order:
 * EGRESS_WHY_EMPTY_HOST (LEN 0), EGRESS_WHY_HOST_TOO_LONG (over
 * EGRESS_HOST_MAX), then the first byte that is not a letter, digit,
 * '-' or '.': EGRESS_WHY_NUL for NUL, EGRESS_WHY_USERINFO for '@',
 * EGRESS_WHY_PERCENT for '%', EGRESS_WHY_HOST_BYTE for any other.
 *
 * Why so narrow: a DNS name on the wire of all three protocols is
 * ASCII letters, digits and hyphens (RFC 1035 section 2.3.1; IDNs as
 * A-labels, RFC 5890 section 2.3.2.1, as RFC 6066 section 3 requires of
 * the SNI and RFC 3986 section 3.2.2 of a URI's reg-name, whose other
 * bytes would be percent-encoded). Every other byte is one a resolver,
 * a logger or the canonical form could read otherwise than the decision
 * did: NUL ends a C string ("allowed.com\0.evil.com"), '@' and '%'
 * change what a URL parser takes for the host. The canonical form
 * (egress_host_canon, shared/egress_name.h) refuses every byte this
 * refuses, and more ('_', label rules): a name refused there for a byte
 * is refused here first, where it was read.
 */
enum egress_why egress_host_why(const uint8_t *host, size_t len);

/* A range of the caller's buffer: LEN bytes at offset OFF. */
struct egress_span {
	size_t off;
	size_t len;
};

/* ---- HTTP/1.1 request head (egress_http.c) ---- */

#define EGRESS_HTTP_LINE_MAX 8192 /* bytes of one line, CRLF included */
#define EGRESS_HTTP_HEAD_MAX 32768 /* bytes of the head, last CRLF incl. */
#define EGRESS_HTTP_MAX_HEADERS 64 /* header fields */
/* Largest Content-Length accepted: 2^53 bytes. */
#define EGRESS_HTTP_CL_MAX ((uint64_t)1 << 53)

enum egress_http_form {
	EGRESS_HTTP_CONNECT = 1, /* CONNECT host:port (authority-form) */
	EGRESS_HTTP_ABSOLUTE, /* METHOD http://host[:port]/path */
};

struct egress_http_field {
	struct egress_span name; /* as sent; names are case-insensitive */
	struct egress_span value; /* without the surrounding SP and HTAB */
	bool drop; /* not forwarded upstream (egress_http_parse's list) */
};

/*
 * One parsed request head. Spans are offsets into the buffer given to
 * egress_http_parse, which must stay the same bytes while they are used.
 */
struct egress_http_req {
	enum egress_http_form form;
	struct egress_span method; /* the method token */
	struct egress_span authority; /* host[:port] as in the target */
	struct egress_span host; /* raw host; an IPv6 literal without [] */
	bool host_ipv6; /* the host was "[IPv6]" */
	uint16_t port; /* the target's, else 80 (absolute-form) */
	struct egress_span target; /* absolute-form: path and query */
	int minor; /* HTTP/1.MINOR: 0 or 1 */
	uint64_t content_length; /* 0 when absent */
	size_t head_len; /* bytes of the head, its final CRLF included */
	size_t nfields;
	struct egress_http_field field[EGRESS_HTTP_MAX_HEADERS];
};

/*
 * Parses the request head at the start of BUF (LEN bytes read so far,
 * borrowed). Returns EGRESS_NEED_MORE until the empty line that ends the
 * head is in BUF; then EGRESS_DONE with *REQ filled (REQ->head_len bytes
 * used; what follows is the body or, after CONNECT, the tunnel), or
 * EGRESS_REFUSED with *WHY set. *WHY is EGRESS_WHY_NONE unless refused.
 * *REQ is undefined unless EGRESS_DONE.
 *
 * Accepted (RFC 9112 sections 2.2, 3 and 5; RFC 9110 sections 7.2, 9.3.6):
 * a request line "METHOD SP TARGET SP HTTP/1.x CRLF" with single spaces,
 * METHOD a token, x 0 or 1; TARGET "host:port" after the method CONNECT
 * (authority-form, the port required), or "http://authority[/path][?q]"
 * after any other method (absolute-form, the scheme in any case, port 80
 * by default); then at most EGRESS_HTTP_MAX_HEADERS lines "name: value"
 * and an empty line. Lines end in CRLF.
 *
 * Refused, each its own why: origin-form and "*" (no host: a proxy
 * cannot know where to go); https:// (a client tunnels TLS with CONNECT)
 * and other schemes; a host that egress_host_why refuses, userinfo,
 * percent-encoding, an IPv6 literal inet_pton does not read, a port not
 * 1..65535 in plain digits or empty; NUL, a bare CR or LF, another
 * control byte but HTAB in a value, obs-fold (RFC 9112 section 5.2), a
 * space before a field's colon (section 5.1), a line over
 * EGRESS_HTTP_LINE_MAX, a head over EGRESS_HTTP_HEAD_MAX; two Host
 * fields, or one whose host and port differ from the target's (RFC 9112
 * section 3.2.2 lets a proxy replace it; refusing is stricter); two
 * Content-Length fields, one that is not plain digits, any
 * Transfer-Encoding (RFC 9112 section 6.1; with Content-Length as well
 * the why is EGRESS_WHY_CL_AND_TE); a CONNECT with a body; a Connection
 * field naming Content-Length (EGRESS_WHY_BAD_HEADER: dropped, it would
 * leave the forwarded body to be read as a second request).
 *
 * Marked drop (RFC 9110 section 7.6.1, hop-by-hop): Connection,
 * Proxy-Connection, Keep-Alive, TE, Trailer, Upgrade,
 * Proxy-Authorization, Proxy-Authenticate, every field the Connection
 * field names, and Host (egress_http_upstream writes its own).
 *
 * Why no request can be smuggled: the proxy handles one request per
 * client connection; its length is the head plus Content-Length bytes
 * (no Transfer-Encoding is accepted, so the head alone says where the
 * request ends); egress_http_upstream forces "Connection: close"; the
 * proxy forwards no client byte beyond the body and closes both sides
 * when the response ends.
 */
enum egress_status egress_http_parse(const uint8_t *buf, size_t len,
    struct egress_http_req *req, enum egress_why *why);

/*
 * Writes into OUT (SIZE bytes) the head the proxy sends upstream for
 * REQ, an absolute-form request that egress_http_parse accepted from BUF:
 * "METHOD SP path-and-query SP HTTP/1.1 CRLF" (the path "/" when the
 * target had none, RFC 9112 section 3.2.1), "Host: authority CRLF", the
 * fields not marked drop as "name: value CRLF", "Connection: close
 * CRLF" and CRLF. Not NUL-terminated. A SIZE of REQ->head_len + 64
 * always suffices. Returns the number of bytes written, or -ENOSPC when
 * SIZE is too small, -EINVAL when REQ is not absolute-form.
 */
long egress_http_upstream(const uint8_t *buf, const struct egress_http_req *req,
    char *out, size_t size);

/* ---- SOCKS5, RFC 1928 (egress_socks.c) ---- */

/* The reply codes of RFC 1928 section 6. */
enum egress_socks5_rep {
	EGRESS_SOCKS5_SUCCEEDED = 0x00,
	EGRESS_SOCKS5_GENERAL_FAILURE = 0x01,
	EGRESS_SOCKS5_NOT_ALLOWED = 0x02,
	EGRESS_SOCKS5_NETWORK_UNREACHABLE = 0x03,
	EGRESS_SOCKS5_HOST_UNREACHABLE = 0x04,
	EGRESS_SOCKS5_CONNECTION_REFUSED = 0x05,
	EGRESS_SOCKS5_TTL_EXPIRED = 0x06,
	EGRESS_SOCKS5_COMMAND_NOT_SUPPORTED = 0x07,
	EGRESS_SOCKS5_ATYP_NOT_SUPPORTED = 0x08,
};

#define EGRESS_SOCKS5_ATYP_IPV4 0x01
#define EGRESS_SOCKS5_ATYP_DOMAIN 0x03
#define EGRESS_SOCKS5_ATYP_IPV6 0x04
#define EGRESS_SOCKS5_REPLY_LEN 10 /* every reply egress_socks5_reply makes */

/*
 * Parses a SOCKS5 greeting "VER NMETHODS METHODS..." at the start of BUF
 * (LEN bytes so far, borrowed; RFC 1928 section 3). EGRESS_DONE when it
 * is complete and offers method 0x00, "no authentication required"
 * (*CONSUMED its 2 + NMETHODS bytes; the proxy answers 05 00). Refused
 * (*WHY): EGRESS_WHY_SOCKS4 when VER is 4 (SOCKS4 and 4a are not
 * served), EGRESS_WHY_SOCKS_VERSION for any other VER but 5,
 * EGRESS_WHY_SOCKS_NO_METHOD when NMETHODS is 0 or 0x00 is not among the
 * methods (the proxy answers 05 FF and closes; RFC 1929's
 * username/password is not supported: the jail holds no secret to give).
 */
enum egress_status egress_socks5_greeting(const uint8_t *buf, size_t len,
    size_t *consumed, enum egress_why *why);

struct egress_socks5_req {
	uint8_t atyp; /* EGRESS_SOCKS5_ATYP_* */
	uint8_t addr[16]; /* IPV4: 4 bytes, IPV6: 16, in network order */
	char host[EGRESS_HOST_MAX + 1]; /* DOMAIN: the name, NUL-terminated;
	                                 * IPV4/IPV6: inet_ntop's text */
	size_t host_len; /* strlen(host) */
	uint16_t port; /* 1..65535 */
	size_t consumed; /* bytes of the request */
	enum egress_socks5_rep rep; /* refused: the reply code to send */
};

/*
 * Parses a SOCKS5 request "VER CMD RSV ATYP DST.ADDR DST.PORT" at the
 * start of BUF (LEN bytes after the greeting, borrowed; RFC 1928
 * section 4). EGRESS_DONE for a complete CONNECT to a domain name, an
 * IPv4 or an IPv6 address with *REQ filled. EGRESS_REFUSED with *WHY and
 * REQ->rep, the reply code the proxy sends before it closes:
 * EGRESS_WHY_SOCKS_VERSION (VER not 5) and EGRESS_WHY_SOCKS_RSV (RSV not
 * 0): general failure; EGRESS_WHY_SOCKS_COMMAND (BIND, UDP ASSOCIATE or
 * an unknown CMD): command not supported; EGRESS_WHY_SOCKS_ATYP: address
 * type not supported; a domain name egress_host_why refuses (a NUL in
 * it, "allowed.com\0.evil.com", is the public bypass; a length of 0 is
 * EGRESS_WHY_EMPTY_HOST) and port 0 (EGRESS_WHY_BAD_PORT): not allowed
 * by ruleset. Each is decided from the bytes up to the field at fault,
 * in wire order.
 */
enum egress_status egress_socks5_request(const uint8_t *buf, size_t len,
    struct egress_socks5_req *req, enum egress_why *why);

/*
 * The method selection message (RFC 1928 section 3) into OUT: 05 00
 * when OK, else 05 FF (no acceptable methods). Returns 2.
 */
size_t egress_socks5_method_reply(bool ok, uint8_t out[2]);

/*
 * A reply (RFC 1928 section 6) with code REP into OUT: VER 5, REP, RSV
 * 0, ATYP IPv4, BND.ADDR 0.0.0.0, BND.PORT 0. The bound address is
 * always zero, for success too: the jail has no use for the proxy's
 * outgoing address and must not learn the host's. Returns
 * EGRESS_SOCKS5_REPLY_LEN.
 */
size_t egress_socks5_reply(enum egress_socks5_rep rep,
    uint8_t out[EGRESS_SOCKS5_REPLY_LEN]);

/* ---- TLS ClientHello (egress_tls.c) ---- */

#define EGRESS_TLS_HELLO_MAX 16384 /* bytes of the handshake message */
#define EGRESS_TLS_RECORDS_MAX 32 /* records that may carry it */
#define EGRESS_TLS_RECORD_MAX 16384 /* 2^14, RFC 8446 section 5.1 */
/* Bytes of input the parser reads at most. */
#define EGRESS_TLS_WIRE_MAX (EGRESS_TLS_HELLO_MAX + 5 * EGRESS_TLS_RECORDS_MAX)

enum egress_tls_kind {
	EGRESS_TLS_SNI = 1, /* a ClientHello with a host_name */
	EGRESS_TLS_NO_SNI, /* a ClientHello without server_name */
	EGRESS_TLS_NOT_TLS, /* not a TLS handshake record */
	EGRESS_TLS_SSLV2, /* an SSLv2-compatible hello: no SNI */
};

struct egress_tls_hello {
	enum egress_tls_kind kind;
	char sni[EGRESS_HOST_MAX + 1]; /* EGRESS_TLS_SNI: NUL-terminated */
	size_t sni_len;
	bool ech; /* an encrypted_client_hello extension (0xfe0d) */
	size_t wire_len; /* bytes of input up to the hello's last byte */
};

/*
 * Reads the ClientHello at the start of BUF (LEN bytes of a tunnel so
 * far, borrowed; RFC 8446 sections 5.1 and 4.1.2, RFC 6066 section 3).
 * The hello may be split over up to EGRESS_TLS_RECORDS_MAX handshake
 * records and over any number of reads. Returns EGRESS_DONE with
 * HELLO->kind:
 *  - EGRESS_TLS_NOT_TLS when the first byte is not 0x16 (handshake) or
 *    the record's major version is not 3 (plain bytes on port 443);
 *  - EGRESS_TLS_SSLV2 for an SSLv2-compatible CLIENT-HELLO (a first
 *    byte with the high bit set, message type 1): it has no extensions;
 *  - EGRESS_TLS_SNI with HELLO->sni, or EGRESS_TLS_NO_SNI, once the
 *    whole ClientHello is in BUF (HELLO->wire_len bytes).
 * HELLO->ech says whether the hello has encrypted_client_hello
 * (draft-ietf-tls-esni, type 0xfe0d): then the SNI is the outer,
 * public name and the real one is encrypted; the proxy checks the outer
 * name, which is where a server that cannot decrypt sends the hello.
 *
 * Refused (*WHY): a record not of type handshake after the first, of
 * length 0 or over 2^14 (EGRESS_WHY_TLS_RECORD); a handshake message
 * other than client_hello (EGRESS_WHY_TLS_NOT_HELLO); any length that
 * overruns what holds it, an extension block that does not end where
 * the hello does, an empty name list (EGRESS_WHY_TLS_LENGTH); a hello
 * over EGRESS_TLS_HELLO_MAX or spread over more than
 * EGRESS_TLS_RECORDS_MAX records (EGRESS_WHY_TLS_TOO_BIG); two
 * server_name extensions (RFC 8446 section 4.2), two host_name entries
 * (RFC 6066 section 3), a name type other than host_name, two
 * encrypted_client_hello; a host_name that egress_host_why refuses
 * (NUL, empty, ...).
 */
enum egress_status egress_tls_hello(const uint8_t *buf, size_t len,
    struct egress_tls_hello *hello, enum egress_why *why);

/* ---- Which protocol a client speaks (egress_host.c) ---- */

enum egress_proto {
	EGRESS_PROTO_UNKNOWN = 0, /* no byte yet */
	EGRESS_PROTO_HTTP, /* an ASCII letter: a request line */
	EGRESS_PROTO_SOCKS5, /* 0x05 */
	EGRESS_PROTO_OTHER, /* anything else: SOCKS4 (0x04), TLS, ... */
};

/* The protocol of a stream to the proxy from its first byte: BUF (LEN
 * bytes, borrowed). EGRESS_PROTO_UNKNOWN only when LEN is 0. */
enum egress_proto egress_sniff(const uint8_t *buf, size_t len);

#endif

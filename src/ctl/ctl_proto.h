/* ctl_proto: framing on the control socket (a Unix SOCK_STREAM).
 *
 * Request:  struct ctl_req_hdr, then `size` bytes holding `argc` words,
 *           each NUL-terminated, back to back.
 * Reply:    struct ctl_reply_hdr, then `size` bytes of text (no NUL):
 *           the command's output when status is 0, one error line
 *           otherwise.
 * Streamed reply (`vxctl capture`): any number of chunks, each a
 *           struct ctl_reply_hdr with flags CTL_REPLY_STREAM, status 0 and
 *           `size` (<= CTL_STREAM_MAX_CHUNK) bytes of the command's binary
 *           output (ctl/ctl_capture.h says what capture puts there), then
 *           one ordinary reply without the flag: the final status and a
 *           summary line.  A refusal before the stream starts is just an
 *           ordinary reply, so a client asking for a stream reads replies
 *           until one comes without the flag.  The client stops a stream by
 *           shutting down its sending side (or sending anything); the
 *           daemon then ends it with the final reply.  A client that goes
 *           away ends it too.
 *
 * Batch request (`vxctl -batch FILE`): flags CTL_REQ_BATCH, argc 1, and
 *           a body of the file's name (NUL-terminated, for messages) then
 *           the file's text as read (no NUL needed, up to
 *           CTL_REQ_MAX_BATCH bytes in all).  The daemon parses the text
 *           as ctl_config.h does a config file and applies its filter
 *           lines as one change (ctl_cmd.h, CTL_BATCH); the reply is an
 *           ordinary one.  One request, so one change: a client that dies
 *           half-way through sending leaves nothing applied.
 *
 * Both ends are on one host, so integers are in host byte order.  One
 * request, one reply, in order; a client may send several requests on one
 * connection.  The encoders and decoders are pure functions over buffers;
 * ctl_proto_call() is the blocking client side used by vxctl. */
#ifndef VX_CTL_CTL_PROTO_H
#define VX_CTL_CTL_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <signal.h>
#include <stdint.h>

#include "ctl/ctl_cmd.h"

#define CTL_DEFAULT_SOCKET "/run/vxswitch/vxswitchd.sock"

enum ctl_proto_consts {
	CTL_PROTO_MAGIC = 0x76786331,      /* "vxc1" */
	CTL_REQ_MAX_BODY = 4096,           /* request words, bytes */
	CTL_REPLY_MAX_BODY = 16 << 20,     /* reply text, bytes */
	CTL_REQ_JSON = 1 << 0,             /* ctl_req_hdr.flags */
	CTL_REQ_BATCH = 1 << 1,            /* a batch request (above) */
	CTL_REQ_STREAM_OK = 1 << 2,        /* the client reads a streamed reply
	                                    * to any command (`filter show` of
	                                    * a large table streams, ctl_server.h) */
	CTL_REQ_FLAGS_KNOWN = CTL_REQ_JSON | CTL_REQ_BATCH | CTL_REQ_STREAM_OK,
	CTL_REQ_MAX_BATCH = (64 << 20) + 4096, /* batch request body, bytes (a
	                                    * -batch file's CTL_BATCH_MAX_SIZE,
	                                    * plus the name) */
	CTL_BATCH_TIMEOUT_S = 600,         /* client: the reply to a batch, which
	                                    * may wait for nine others of 100,000
	                                    * rules each to be applied first */
	CTL_CALL_TIMEOUT_S = 60,           /* client: give up on a silent daemon
	                                    * (not within a stream, which may be
	                                    * quiet as long as the traffic) */
	CTL_REPLY_STREAM = 1 << 0,         /* ctl_reply_hdr.flags: a chunk, more follow */
	CTL_REPLY_FLAGS_KNOWN = CTL_REPLY_STREAM,
	CTL_STREAM_MAX_CHUNK = 1 << 20,    /* bytes of one stream chunk */
};

/* Exit statuses of vxctl, also carried in replies. */
enum ctl_status {
	CTL_STATUS_OK = 0,
	CTL_STATUS_REFUSED = 1,    /* parse error or refused by the daemon */
	CTL_STATUS_UNREACHABLE = 2,/* cannot reach the daemon; also sent by a
	                            * daemon that turns a client away (too
	                            * many clients, too slow): try again */
	CTL_STATUS_FINDINGS = 3,   /* done, and the answer is "something is wrong"
	                            * (diagnose): output on stdout, vxctl exits 1 */
};

struct ctl_req_hdr {
	uint32_t magic;
	uint16_t flags;  /* CTL_REQ_* */
	uint16_t argc;   /* 1..CTL_MAX_WORDS */
	uint32_t size;   /* body bytes, <= CTL_REQ_MAX_BODY (a batch:
	                  * <= CTL_REQ_MAX_BATCH) */
};

struct ctl_reply_hdr {
	uint32_t magic;
	uint32_t status; /* enum ctl_status */
	uint32_t size;   /* body bytes, <= CTL_REPLY_MAX_BODY (a stream chunk:
	                  * <= CTL_STREAM_MAX_CHUNK) */
	uint32_t flags;  /* CTL_REPLY_* */
};

/* A decoded request; argv points into the buffer it was decoded from. */
struct ctl_request {
	bool json;
	int argc;
	const char *argv[CTL_MAX_WORDS];
	bool batch;        /* CTL_REQ_BATCH: argv[0] is the name, then text */
	bool stream_ok;    /* CTL_REQ_STREAM_OK */
	const char *text;  /* batch: the file's text, text_len bytes */
	size_t text_len;
};

/* Encode a request into buf.  Returns its total size, -E2BIG if argc or
 * the words are over the limits, -ENOSPC if buf is too small. */
int ctl_proto_encode_request(int argc, const char *const *argv, bool json,
			     uint8_t *buf, size_t size);

/* Encode a batch request (name, then text[0..len)) into buf.  Returns its
 * total size, -E2BIG over CTL_REQ_MAX_BATCH, -ENOSPC if buf is too
 * small. */
int ctl_proto_encode_batch(const char *name, const char *text, size_t len, bool json,
			   uint8_t *buf, size_t size);

/* The bytes the request starting at buf[0..len) occupies, header and body,
 * once its header is in (0 before); negative as decode below.  The daemon
 * sizes a batch request's buffer with it. */
long ctl_proto_request_size(const uint8_t *buf, size_t len);

/* Decode the request at the start of buf[0..len).  Returns the number of
 * bytes it occupies (> 0), 0 if more bytes are needed, -EPROTO for bytes
 * that are not a request (bad magic, unknown flags, argc or word count
 * wrong, no NUL at the end), -EMSGSIZE for a body over CTL_REQ_MAX_BODY
 * (a batch: CTL_REQ_MAX_BATCH). */
int ctl_proto_decode_request(const uint8_t *buf, size_t len,
			     struct ctl_request *req);

/* Fill a reply header (a final one: flags 0). */
void ctl_proto_reply_hdr(struct ctl_reply_hdr *hdr, enum ctl_status status,
			 uint32_t size);
/* Fill the header of a stream chunk of `size` bytes. */
void ctl_proto_chunk_hdr(struct ctl_reply_hdr *hdr, uint32_t size);

/* Check a received reply header: 0, or -EPROTO (bad magic, status or
 * flags, a chunk whose status is not 0) / -EMSGSIZE. */
int ctl_proto_check_reply_hdr(const struct ctl_reply_hdr *hdr);

/* Client: connect to the socket at path, send one request, read the reply.
 * On 0, *status is the daemon's status and *text a malloc'ed
 * NUL-terminated reply the caller frees.  Negative errno when the daemon
 * cannot be reached, the exchange breaks, or no reply comes within
 * CTL_CALL_TIMEOUT_S (-ETIMEDOUT) (vxctl exits 2).  A daemon that turns
 * the client away may answer and close before the request is sent: the
 * send then fails, and the reply already waiting is still read. */
int ctl_proto_call(const char *path, int argc, const char *const *argv,
		   bool json, int *status, char **text);

/* As ctl_proto_call(), sending a batch request (text[0..len) read from
 * the file `name`).  -E2BIG when it is over CTL_REQ_MAX_BATCH. */
int ctl_proto_call_batch(const char *path, const char *name, const char *text, size_t len,
			 bool json, int *status, char **out);

/* Client of a streamed reply: what to do with each chunk, and when to ask
 * for the end. */
struct ctl_stream_client {
	/* Called with each chunk's body; a negative return asks the daemon to
	 * stop (as *stop does) and the chunks still coming are not passed. */
	int (*chunk)(void *ctx, const uint8_t *body, size_t size);
	void *ctx;
	/* Set by a signal handler (installed without SA_RESTART, so a blocked
	 * read returns EINTR): the sending side is shut down once, and the
	 * final reply is still read. */
	volatile sig_atomic_t *stop;
};

/* As ctl_proto_call(), for a command that may answer with a stream: the
 * chunks go to sc->chunk, *status and *text are the final reply's.  The
 * CTL_CALL_TIMEOUT_S limit holds until the first reply header; within a
 * stream a read waits as long as the daemon sends nothing. */
int ctl_proto_call_stream(const char *path, int argc, const char *const *argv,
			  bool json, const struct ctl_stream_client *sc,
			  int *status, char **text);

#endif /* VX_CTL_CTL_PROTO_H */

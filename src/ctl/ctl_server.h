/* ctl_server: the daemon's end of the control socket, non-blocking.
 *
 * The daemon polls ctl_server_fd() for POLLIN from its own loop and calls
 * ctl_server_handle() when it is readable.  That one fd (an epoll set)
 * covers the listening socket and every client, so the daemon's poll set
 * never changes.  ctl_server_handle() accepts, reads, parses each complete
 * request with ctl_cmd_parse() (a batch request: ctl_config_parse_batch(),
 * dispatched as one CTL_BATCH command) (a parse error is answered directly, the
 * dispatcher never sees it), calls the dispatcher, and writes the reply,
 * buffering what the client does not read yet.  It never blocks.
 *
 * Untrusted clients are bounded, so that no client, stuck or hostile, can
 * lock the operator out or stall the others:
 *   - at most max_clients connections (default 64: scripts and monitoring
 *     run a handful of vxctl calls at once, and 64 clients cost 64 fds and
 *     64 request buffers of 4 KB).  A newcomer over the cap takes the slot
 *     of the client that has waited longest without a complete request
 *     (none sent yet, half of one, or idle between requests), if that one
 *     has waited evict_after_ms (default 200 ms; an honest client sends
 *     its request in microseconds): the stalled one is closed (evicted).
 *     Before that, what it has sent is read, so a request waiting in its
 *     socket is served, not lost.  With nobody to evict, the newcomer is
 *     answered with one line, "vxswitchd: too many control clients (64),
 *     try again", status CTL_STATUS_UNREACHABLE, and closed (refused_full):
 *     vxctl prints the line and exits 2, instead of a bare reset;
 *   - a request must be complete within request_timeout_ms (default 2 s)
 *     of the connection (first request) or of its first byte (later ones),
 *     else the client is closed (timed_out).  A batch request (its own
 *     buffer, only for a trusted peer) must make progress within it
 *     instead: 14 MB of `vxctl -b` from each of ten clients at once take
 *     longer.  The time the daemon spends parsing and serving one request
 *     does not count against the others awaiting theirs (they could not
 *     be read meanwhile);
 *   - a client idle between requests is closed after idle_timeout_ms
 *     (default 60 s; idle_closed);
 *   - a request body over CTL_REQ_MAX_BODY (a batch request, ctl_proto.h:
 *     CTL_REQ_MAX_BATCH, its buffer sized by its header and freed once
 *     served: ctl_server_batch.c), or bytes that are not a request, close
 *     that client (dropped_oversize / dropped_garbage);
 *   - one request at a time per client: while its reply is unread, the
 *     client's further bytes are not read, so the memory held for a client
 *     is one request buffer plus one reply;
 *   - a reply is at most max_pending_out bytes; a larger output is replaced
 *     by an error line;
 *   - a reply must be read within reply_timeout_ms (default 5 s; 16 MB
 *     over a Unix socket takes milliseconds) of being queued, else the
 *     client is closed as a slow reader (dropped_slow).  Every read and
 *     write is non-blocking, so meanwhile the others are served;
 *   - a peer whose SO_PEERCRED uid is neither root nor the daemon's, and
 *     who is not in the daemon's group (its SO_PEERCRED gid or one of its
 *     SO_PEERGROUPS), is closed (refused_cred), in case the socket mode was
 *     changed.  The group counts only when it is not root's (gid 0): it is
 *     the socket group of `vxswitchd --group`, which runs the daemon as
 *     that group and chmods the socket 0660 (control/privs.h).
 * A client closed by a timeout or evicted before it had a request served
 * (or in the middle of one) is told why in one reply line, status
 * CTL_STATUS_UNREACHABLE; one idle between requests just sees EOF, as if
 * the daemon had restarted, so a long-lived client never reads a reply it
 * did not ask for.  The deadlines are kept by a timerfd in the server's
 * epoll set, so the fd becomes readable when one passes: the daemon's poll
 * loop needs no timeout of its own.  Worst-case memory: max_clients x
 * (4 KB + max_pending_out), plus CTL_REQ_MAX_BATCH for each client in the
 * middle of sending a batch.
 *
 * Failures, and what the daemon does about them.  ctl_server_handle()
 * returns a negative errno ONLY when the server itself is broken and will
 * never work again: epoll_wait() on its own set failed (not EINTR), or
 * accept() said the listening socket is unusable (EBADF, EINVAL, ENOTSOCK,
 * EOPNOTSUPP, EFAULT).  That return is FATAL: the daemon must stop (or
 * destroy and re-create the server); calling handle again just fails
 * again.  Everything else is per-client or transient, is counted in
 * struct ctl_server_stats, and handle returns 0: the daemon carries on.
 * Each failure is counted under exactly one reason:
 *   - the client's fault: garbage, oversize, refused_full, refused_cred,
 *     timed_out, dropped_slow (the connection is closed); bad_requests and
 *     refused (answered with an error line, the connection stays);
 *   - room made for others: evicted, idle_closed (the connection is
 *     closed; nobody's fault);
 *   - the client left: hangups (mid-request, before reading its reply,
 *     reset, or gone before accept), never an error of ours;
 *   - ours: errors, with last_errno, each costing one connection or one
 *     client (accept out of fds or memory, epoll_ctl, malloc, a send or
 *     recv failing for another reason than the peer leaving).  These are
 *     also logged through vlog, rate limited.
 * A client that closes cleanly between requests is counted nowhere but in
 * disconnected.
 *
 * Out of fds (EMFILE/ENFILE), the pending connection would stay in the
 * backlog and keep the listener readable, so the daemon's loop would spin.
 * The server keeps one spare fd (on /dev/null) for that case: it closes
 * it, accepts and closes the connection (the client sees EOF at once,
 * not a hang), and re-opens the spare.
 *
 * The socket is created under umask 077 and, before listen(), chmod'ed
 * 0600, or with share_group (vxswitchd --group) chown'ed to that group and
 * chmod'ed 0660: nobody can connect before the file has its final owner
 * and mode, so a member of the group who sees the socket answer is never
 * refused by a mode not yet changed.  A stale socket file at path is
 * replaced; the directory must exist.
 *
 * Streamed replies (`vxctl capture`; framing in ctl_proto.h).  A
 * dispatcher that answers with a stream calls ctl_server_stream_begin()
 * during dispatch and returns 0; what it printed is discarded.  It then
 * sends chunks with ctl_stream_send() whenever it has data (from the
 * daemon's loop, outside ctl_server_handle too), and ends with
 * ctl_stream_end() (the final status and summary line).  A streaming
 * client:
 *   - is exempt from the request, idle and reply deadlines and from
 *     eviction while its stream runs (it may wait minutes for traffic),
 *     but still counts against max_clients; its final reply must be read
 *     within reply_timeout_ms like any reply;
 *   - holds at most CTL_STREAM_MAX_PENDING bytes of unsent chunks: over
 *     that ctl_stream_send() refuses (-ENOBUFS) and the owner holds back
 *     (and counts its own drops), so a slow reader costs bounded memory
 *     and never blocks the daemon;
 *   - stops the stream by shutting down its sending side or sending any
 *     byte: the owner gets CTL_STREAM_STOP once and should end the stream;
 *   - that goes away (hang-up, error, server destroyed) gives the owner
 *     CTL_STREAM_GONE; the handle is dead when the callback returns.
 * After ctl_stream_end() the handle is dead too; the client is an ordinary
 * one again once the final reply is read.
 *
 * Single-threaded: call everything from the daemon's control thread. */
#ifndef VX_CTL_CTL_SERVER_H
#define VX_CTL_CTL_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_print.h"
#include "ctl/ctl_proto.h"

struct ctl_server;

/* Execute one parsed command.  Write the output with out (it is already in
 * the client's mode, text or JSON).  Return 0 on success; on refusal return
 * a negative errno and, preferably, put one line in err->msg saying why
 * ("port vx0: no such port"); if err->msg is left empty the reply says
 * strerror(-ret).  On refusal the output written so far is discarded. */
/* A positive return is success too, with a verdict: CTL_DONE_FINDINGS
 * (diagnose found a problem) sends the output with CTL_STATUS_FINDINGS,
 * so vxctl prints it and exits 1. */
enum { CTL_DONE_FINDINGS = 1 };
typedef int (*ctl_dispatch_fn)(void *ctx, const struct ctl_cmd *cmd,
			       struct ctl_print *out, struct ctl_err *err);

enum ctl_server_defaults {
	CTL_SERVER_DEFAULT_MAX_CLIENTS = 64,
	CTL_SERVER_DEFAULT_REQUEST_TIMEOUT_MS = 2000,
	CTL_SERVER_DEFAULT_IDLE_TIMEOUT_MS = 60000,
	CTL_SERVER_DEFAULT_REPLY_TIMEOUT_MS = 5000,
	CTL_SERVER_DEFAULT_EVICT_AFTER_MS = 200,
};

/* Nanoseconds of a monotonic clock. */
typedef uint64_t ctl_server_clock_fn(void);

/* 0 (or NULL) in any field: its default, above. */
struct ctl_server_opts {
	const char *path;        /* NULL: CTL_DEFAULT_SOCKET */
	/* vxswitchd --group: the socket's group and mode 0660, set before
	 * listen(); false: root (the owner) only, 0600. */
	bool share_group;
	gid_t group;
	unsigned int max_clients;
	size_t max_pending_out;  /* reply body cap; 0: CTL_REPLY_MAX_BODY */
	unsigned int request_timeout_ms;
	unsigned int idle_timeout_ms;
	unsigned int reply_timeout_ms;
	unsigned int evict_after_ms;
	ctl_server_clock_fn *clock; /* NULL: CLOCK_MONOTONIC; tests warp it */
};

/* Counters since ctl_server_create(); see "Failures" above for which
 * reason each failure is counted under. */
struct ctl_server_stats {
	uint64_t accepted;        /* connections taken on as clients */
	uint64_t disconnected;    /* clients closed, for any reason; clients
	                           * now = accepted - disconnected */
	uint64_t requests;        /* complete requests read, good or bad */
	uint64_t bad_requests;    /* refused by ctl_cmd_parse(), answered */
	uint64_t refused;         /* refused by the dispatcher (or its output
	                           * too big), answered */
	uint64_t refused_full;    /* connections over max_clients, nobody
	                           * to evict: answered "too many" */
	uint64_t evicted;         /* stalled clients closed to admit one */
	uint64_t timed_out;       /* no complete request in time */
	uint64_t idle_closed;     /* idle between requests too long */
	uint64_t dropped_slow;    /* slow readers: reply unread in time */
	uint64_t refused_cred;    /* peer neither root, nor our uid, nor in our group */
	uint64_t dropped_garbage; /* bytes that are not a request */
	uint64_t dropped_oversize;/* request body over CTL_REQ_MAX_BODY */
	uint64_t hangups;         /* client left with a request or reply
	                           * unfinished, or reset the connection */
	uint64_t errors;          /* failures of ours (see above) */
	int last_errno;           /* positive errno of the latest `errors`,
	                           * 0 if none */
	unsigned int clients;     /* now, not a counter */
	unsigned int max_clients; /* the cap in force */
};

struct ctl_stream;

enum ctl_stream_event {
	CTL_STREAM_STOP = 1, /* the client asks for the end: ctl_stream_end() it */
	CTL_STREAM_GONE,     /* the client is gone; the handle dies on return */
	CTL_STREAM_ROOM,     /* (ctl_stream_want_room) half the pending room is
	                      * free: produce more, or end */
};
typedef void ctl_stream_event_fn(void *arg, struct ctl_stream *st, enum ctl_stream_event ev);

enum { CTL_STREAM_MAX_PENDING = 4 << 20 }; /* unsent bytes per stream */

/* During dispatch only: the reply to the request being dispatched becomes a
 * stream.  NULL with errno (EINVAL outside dispatch, ENOMEM). */
struct ctl_stream *ctl_server_stream_begin(struct ctl_server *server, ctl_stream_event_fn *fn,
					   void *arg);
/* During dispatch: whether the client said it reads a streamed reply to
 * any command (CTL_REQ_STREAM_OK): a command whose output may be larger
 * than a reply (filter show of a million rules) streams only then. */
bool ctl_server_stream_ok(const struct ctl_server *server);
/* A producer with its own data (not traffic): while `want` is on, it gets
 * CTL_STREAM_ROOM each time the daemon's loop finds the client's socket
 * writable with at least half of CTL_STREAM_MAX_PENDING free.  It sends a
 * bounded amount per call, so the other clients are served between its
 * turns, and a slow reader just gets fewer turns. */
void ctl_stream_want_room(struct ctl_stream *st, bool want);
/* Bytes a chunk (with its header) may take now; 0 once ended or broken. */
size_t ctl_stream_room(const struct ctl_stream *st);
/* Queue one chunk of len <= CTL_STREAM_MAX_CHUNK bytes and send what the
 * socket takes.  0; -ENOBUFS when over the room (nothing queued); -EPIPE
 * or another errno when the client is broken (it is dropped at its next
 * event, and the owner gets CTL_STREAM_GONE then). */
int ctl_stream_send(struct ctl_stream *st, const void *data, size_t len);
/* The final reply: `status` and `text` (a summary line, may be NULL). */
void ctl_stream_end(struct ctl_stream *st, enum ctl_status status, const char *text);

/* Returns 0 and *out, or a negative errno (nothing left behind).  Holds
 * max_clients + 4 fds at most: epoll, listener, spare, timer, clients. */
int ctl_server_create(const struct ctl_server_opts *opts,
		      struct ctl_server **out);
/* Closes every client and the socket, and unlinks the path. NULL: no-op. */
void ctl_server_destroy(struct ctl_server *server);

/* The fd to poll for POLLIN. */
int ctl_server_fd(const struct ctl_server *server);

/* Do all the work that is ready, without blocking.  Returns 0, or a
 * negative errno when the server itself is broken: fatal, see "Failures"
 * above.  Every per-client failure is counted and returns 0. */
int ctl_server_handle(struct ctl_server *server, ctl_dispatch_fn dispatch,
		      void *ctx);

unsigned int ctl_server_n_clients(const struct ctl_server *server);
void ctl_server_get_stats(const struct ctl_server *server,
			  struct ctl_server_stats *stats);

#endif /* VX_CTL_CTL_SERVER_H */

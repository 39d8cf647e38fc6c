/* ctl_server: the daemon's end of the control socket, non-blocking.
 *
 * The daemon polls ctl_server_fd() for POLLIN from its own loop and calls
 * ctl_server_handle() when it is readable.  That one fd (an epoll set)
 * covers the listening socket and every client, so the daemon's poll set
 * never changes.  ctl_server_handle() accepts, reads, parses each complete
 * request with ctl_cmd_parse() (a parse error is answered directly, the
 * dispatcher never sees it), calls the dispatcher, and writes the reply,
 * buffering what the client does not read yet.  It never blocks.
 *
 * Untrusted clients are bounded:
 *   - at most max_clients connections; further ones are accepted and closed
 *     at once (counted in refused_full);
 *   - a request body over CTL_REQ_MAX_BODY, or bytes that are not a
 *     request, close that client (dropped_oversize / dropped_garbage);
 *   - one request at a time per client: while its reply is unread, the
 *     client's further bytes are not read, so the memory held for a client
 *     is one request buffer plus one reply;
 *   - a reply is at most max_pending_out bytes; a larger output is replaced
 *     by an error line;
 *   - a peer whose SO_PEERCRED uid is neither root nor the daemon's is
 *     closed (refused_cred), in case the socket mode was changed.
 * Not bounded: how long a connected client may stay idle, so max_clients
 * idle (root) clients lock others out until they disconnect.
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
 *   - the client's fault: garbage, oversize, refused_full, refused_cred
 *     (the connection is closed); bad_requests and refused (answered with
 *     an error line, the connection stays);
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
 * The socket is created under umask 077 and fchmod'ed 0600 before listen(),
 * so only root (the owner) can connect.  A stale socket file at path is
 * replaced; the directory must exist.
 *
 * Single-threaded: call everything from the daemon's control thread. */
#ifndef VX_CTL_CTL_SERVER_H
#define VX_CTL_CTL_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_print.h"

struct ctl_server;

/* Execute one parsed command.  Write the output with out (it is already in
 * the client's mode, text or JSON).  Return 0 on success; on refusal return
 * a negative errno and, preferably, put one line in err->msg saying why
 * ("port vx0: no such port"); if err->msg is left empty the reply says
 * strerror(-ret).  On refusal the output written so far is discarded. */
typedef int (*ctl_dispatch_fn)(void *ctx, const struct ctl_cmd *cmd,
			       struct ctl_print *out, struct ctl_err *err);

struct ctl_server_opts {
	const char *path;        /* NULL: CTL_DEFAULT_SOCKET */
	unsigned int max_clients;/* 0: 16 */
	size_t max_pending_out;  /* reply body cap; 0: CTL_REPLY_MAX_BODY */
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
	uint64_t refused_full;    /* connections over max_clients */
	uint64_t refused_cred;    /* peer neither root nor our uid */
	uint64_t dropped_garbage; /* bytes that are not a request */
	uint64_t dropped_oversize;/* request body over CTL_REQ_MAX_BODY */
	uint64_t hangups;         /* client left with a request or reply
	                           * unfinished, or reset the connection */
	uint64_t errors;          /* failures of ours (see above) */
	int last_errno;           /* positive errno of the latest `errors`,
	                           * 0 if none */
};

/* Returns 0 and *out, or a negative errno (nothing left behind).  Holds
 * max_clients + 3 fds at most: epoll, listener, spare, clients. */
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

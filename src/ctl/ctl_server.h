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

struct ctl_server_stats {
	uint64_t accepted;
	uint64_t requests;        /* requests dispatched or refused */
	uint64_t refused_full;    /* connections over max_clients */
	uint64_t dropped_garbage;
	uint64_t dropped_oversize;
	uint64_t refused_cred;    /* peer neither root nor our uid */
};

/* Returns 0 and *out, or a negative errno (nothing left behind). */
int ctl_server_create(const struct ctl_server_opts *opts,
		      struct ctl_server **out);
/* Closes every client and the socket, and unlinks the path. NULL: no-op. */
void ctl_server_destroy(struct ctl_server *server);

/* The fd to poll for POLLIN. */
int ctl_server_fd(const struct ctl_server *server);

/* Do all the work that is ready, without blocking.  Returns 0, or a
 * negative errno only for a failure of the server itself (client failures
 * just close that client). */
int ctl_server_handle(struct ctl_server *server, ctl_dispatch_fn dispatch,
		      void *ctx);

unsigned int ctl_server_n_clients(const struct ctl_server *server);
void ctl_server_get_stats(const struct ctl_server *server,
			  struct ctl_server_stats *stats);

#endif /* VX_CTL_CTL_SERVER_H */

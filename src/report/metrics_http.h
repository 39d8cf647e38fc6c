/* metrics_http: the HTTP side of `vxswitchd --metrics ADDR:PORT`, served
 * with libmicrohttpd.
 *
 * Threading: none of its own.  libmicrohttpd runs without an internal
 * thread, in its epoll mode; metrics_http_fd() is its epoll fd, which the
 * control loop watches next to the control socket and hands to
 * metrics_http_run() when it is readable (and at least once a second, so
 * idle connections time out).  The render callback therefore runs on the
 * control thread, where taking a worker snapshot is already safe, and the
 * worker never sees an HTTP client: a scrape costs it one SNAPSHOT request
 * between two batches, as `vxctl stats` does.
 *
 * A slow or half-open client never blocks anything: sockets are
 * non-blocking, at most METRICS_HTTP_MAX_CONNS are open at once, and one
 * that stays silent for METRICS_HTTP_TIMEOUT_S is closed.
 *
 * Paths: GET (or HEAD) /metrics gives the exposition (METRICS_CONTENT_TYPE),
 * / a line pointing there; any other path 404, any other method 405. */
#ifndef VX_REPORT_METRICS_HTTP_H
#define VX_REPORT_METRICS_HTTP_H

#include <stddef.h>
#include <sys/socket.h>

enum {
	METRICS_HTTP_MAX_CONNS = 16,
	METRICS_HTTP_TIMEOUT_S = 5,
	METRICS_ERR_SIZE = 256,
};

/* The text for one scrape: *text (malloc'd, the caller frees it) and its
 * length.  0 or a negative errno (the client gets a 500). */
typedef int metrics_render_fn(void *ctx, char **text, size_t *len);

struct metrics_http;

/* "ADDR:PORT" (IPv4) or "[ADDR]:PORT" (IPv6), numeric only, PORT 1..65535.
 * 0, or -EINVAL with err saying what is wrong. */
int metrics_parse_addr(const char *spec, struct sockaddr_storage *ss, socklen_t *len,
		       char err[METRICS_ERR_SIZE]);

/* Binds and listens on addr (port 0 is allowed here, for tests: see
 * metrics_http_port) and starts serving.  0, or a negative errno with err
 * saying which step failed ("bind: Address already in use"). */
int metrics_http_start(const struct sockaddr *addr, socklen_t len, metrics_render_fn *render, void *ctx,
		       struct metrics_http **out, char err[METRICS_ERR_SIZE]);
/* Stops serving and closes every connection.  NULL is a no-op. */
void metrics_http_stop(struct metrics_http *m);

/* The fd to watch for EPOLLIN. */
int metrics_http_fd(const struct metrics_http *m);
/* The port it listens on (host order). */
unsigned metrics_http_port(const struct metrics_http *m);
/* Serves what is ready without blocking; closes timed-out connections. */
void metrics_http_run(struct metrics_http *m);

#endif

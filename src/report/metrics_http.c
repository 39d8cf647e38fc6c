/* GET /metrics over libmicrohttpd, driven by the control loop
 * (metrics_http.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/metrics_http.h"
#include "report/metrics_text.h"

struct metrics_http {
	struct MHD_Daemon *mhd;
	int listen_fd;
	int epoll_fd;
	unsigned port;
	metrics_render_fn *render;
	void *ctx;
};

static int parse_port(const char *s, unsigned *port)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || s[0] == '+' || v > 65535)
		return -EINVAL;
	*port = (unsigned)v;
	return 0;
}

int metrics_parse_addr(const char *spec, struct sockaddr_storage *ss, socklen_t *len, char err[METRICS_ERR_SIZE])
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon = strrchr(spec, ':');
	memset(ss, 0, sizeof(*ss));
	if (!colon || colon == spec) {
		snprintf(err, METRICS_ERR_SIZE, "expected ADDR:PORT or [ADDR6]:PORT");
		return -EINVAL;
	}
	size_t hlen = (size_t)(colon - spec);
	bool v6 = spec[0] == '[';
	if (v6 && (hlen < 3 || spec[hlen - 1] != ']')) {
		snprintf(err, METRICS_ERR_SIZE, "an IPv6 address goes in brackets: [ADDR6]:PORT");
		return -EINVAL;
	}
	const char *h = v6 ? spec + 1 : spec;
	hlen = v6 ? hlen - 2 : hlen;
	if (hlen >= sizeof(host)) {
		snprintf(err, METRICS_ERR_SIZE, "not a numeric IP address");
		return -EINVAL;
	}
	memcpy(host, h, hlen);
	host[hlen] = 0;
	unsigned port;
	if (parse_port(colon + 1, &port) == 0 && port == 0) {
		snprintf(err, METRICS_ERR_SIZE, "port 0: give a fixed port, the scraper has to know it");
		return -EINVAL;
	}
	if (parse_port(colon + 1, &port) < 0) {
		snprintf(err, METRICS_ERR_SIZE, "port \"%s\": expected a number 1..65535", colon + 1);
		return -EINVAL;
	}
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	if (!v6 && inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		*len = sizeof(*sin);
		return 0;
	}
	if (v6 && inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*sin6);
		return 0;
	}
	snprintf(err, METRICS_ERR_SIZE, "\"%s\" is not a numeric IP%s address", host, v6 ? "v6" : "v4");
	return -EINVAL;
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, const char *type, char *body,
			     size_t len, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
	if (!r) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	enum MHD_Result ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result reply_const(struct MHD_Connection *conn, unsigned status, const char *text)
{
	return reply(conn, status, "text/plain; charset=utf-8", (char *)text, strlen(text), MHD_RESPMEM_PERSISTENT);
}

/* Answers at the first call: no request here has a body worth reading
 * (one sent with POST is refused with 405 before it is read). */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
				  const char *version, const char *upload_data, size_t *upload_data_size,
				  void **con_cls)
{
	struct metrics_http *m = cls;
	(void)version;
	(void)upload_data;
	(void)upload_data_size;
	(void)con_cls;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_const(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET /metrics\n");
	if (!strcmp(url, "/"))
		return reply_const(conn, MHD_HTTP_OK, "vxswitchd: the metrics are at /metrics\n");
	if (strcmp(url, "/metrics"))
		return reply_const(conn, MHD_HTTP_NOT_FOUND, "not found: the metrics are at /metrics\n");
	char *text = NULL;
	size_t len = 0;
	if (m->render(m->ctx, &text, &len) < 0) {
		free(text);
		return reply_const(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot take a snapshot\n");
	}
	return reply(conn, MHD_HTTP_OK, METRICS_CONTENT_TYPE, text, len, MHD_RESPMEM_MUST_FREE);
}

static int listen_on(const struct sockaddr *addr, socklen_t len, char err[METRICS_ERR_SIZE])
{
	int fd = socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, METRICS_ERR_SIZE, "socket: %s", strerror(errno));
		return -errno;
	}
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (addr->sa_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, addr, len) < 0 || listen(fd, 16) < 0) {
		int e = errno;
		snprintf(err, METRICS_ERR_SIZE, "bind: %s", strerror(e));
		close(fd);
		return -e;
	}
	return fd;
}

static unsigned bound_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return 0;
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

int metrics_http_start(const struct sockaddr *addr, socklen_t len, metrics_render_fn *render, void *ctx,
		       struct metrics_http **out, char err[METRICS_ERR_SIZE])
{
	struct metrics_http *m = calloc(1, sizeof(*m));
	if (!m) {
		snprintf(err, METRICS_ERR_SIZE, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	m->render = render;
	m->ctx = ctx;
	m->listen_fd = listen_on(addr, len, err);
	if (m->listen_fd < 0) {
		int ret = m->listen_fd;
		free(m);
		return ret;
	}
	m->port = bound_port(m->listen_fd);
	unsigned flags = MHD_USE_EPOLL | (addr->sa_family == AF_INET6 ? MHD_USE_IPv6 : 0);
	m->mhd = MHD_start_daemon(flags, 0, NULL, NULL, on_request, m,
				  MHD_OPTION_LISTEN_SOCKET, m->listen_fd,
				  MHD_OPTION_CONNECTION_LIMIT, (unsigned)METRICS_HTTP_MAX_CONNS,
				  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)METRICS_HTTP_TIMEOUT_S,
				  MHD_OPTION_END);
	const union MHD_DaemonInfo *info = m->mhd ? MHD_get_daemon_info(m->mhd, MHD_DAEMON_INFO_EPOLL_FD) : NULL;
	if (!info) {
		snprintf(err, METRICS_ERR_SIZE, "libmicrohttpd would not start");
		metrics_http_stop(m);
		return -EIO;
	}
	m->epoll_fd = info->epoll_fd;
	*out = m;
	return 0;
}

void metrics_http_stop(struct metrics_http *m)
{
	if (!m)
		return;
	if (m->mhd) {
		MHD_stop_daemon(m->mhd); /* closes the listening socket too */
		m->listen_fd = -1;
	}
	if (m->listen_fd >= 0)
		close(m->listen_fd);
	free(m);
}

int metrics_http_fd(const struct metrics_http *m)
{
	return m->epoll_fd;
}

unsigned metrics_http_port(const struct metrics_http *m)
{
	return m->port;
}

void metrics_http_run(struct metrics_http *m)
{
	MHD_run(m->mhd);
}

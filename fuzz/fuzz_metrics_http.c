/* fuzz_metrics_http: the scrape endpoint of `vxswitchd --metrics`, through
 * the real server (report/metrics_http.c: libmicrohttpd in the daemon's
 * epoll mode) on a loopback TCP socket, as any host that can reach the
 * port would write to it.
 *
 * Input: the bytes of the request(s).  The client sends them, shuts down
 * its sending side and reads until the server closes, the server being run
 * between steps exactly as the control loop runs it (metrics_http_run()).
 *
 * libmicrohttpd is a system library, not built with the fuzzer's coverage
 * or ASan instrumentation: this target drives our handler (on_request: the
 * method and path dispatch, the render callback, the response) with
 * everything libmicrohttpd lets through, and checks what the client gets:
 *   - every response begins with an HTTP/1.x status line whose code is
 *     one the handler or libmicrohttpd's own refusals give;
 *   - a 200 to GET /metrics carries the rendered text whole;
 *   - no connection outlives its client: a client that got no close
 *     within 5 ms of silence (an unfinished request waits for the
 *     server's 5 s timeout, METRICS_HTTP_TIMEOUT_S, by design) resets
 *     its connection, and every 64th input a well-formed scrape on a
 *     fresh connection must still get its 200 with the whole text (the
 *     server lives for the whole run: a slot leaked out of 16 would show
 *     as refusals).
 * The same bytes also go through metrics_parse_addr() (the --metrics
 * ADDR:PORT spec), which must accept or explain. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "report/metrics_http.h"

#define CHECK(cond)                          \
	do {                                 \
		if (!(cond))                 \
			__builtin_trap();    \
	} while (0)

enum { MAX_REQ = 8192, MAX_RESP = 1 << 16, SILENCE_MS = 5 };

static const char metric_text[] = "# TYPE vxswitch_fuzz_scrapes counter\nvxswitch_fuzz_scrapes 1\n";
static struct metrics_http *server;
static unsigned renders;

static int render(void *ctx, char **text, size_t *len)
{
	(void)ctx;
	renders++;
	*text = strdup(metric_text);
	if (!*text)
		return -ENOMEM;
	*len = strlen(metric_text);
	return 0;
}

static void setup(void)
{
	if (server)
		return;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	char err[METRICS_ERR_SIZE];
	CHECK(metrics_http_start((struct sockaddr *)&sin, sizeof(sin), render, NULL, &server, err) == 0);
}

static bool known_status(unsigned code)
{
	static const unsigned codes[] = { 200, 400, 404, 405, 408, 413, 414, 417, 431, 500, 501, 505 };
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (code == codes[i])
			return true;
	return false;
}

/* Checks every response in resp[0..len) (several on a kept-alive
 * connection; a HEAD's has no body, so only status lines are checked past
 * the first). */
static void check_responses(const char *resp, size_t len, bool first_is_get_metrics)
{
	if (len == 0)
		return;
	CHECK(len >= 12 && !memcmp(resp, "HTTP/1.", 7));
	unsigned code = (unsigned)atoi(resp + 9);
	CHECK(known_status(code));
	if (first_is_get_metrics && code == 200)
		CHECK(memmem(resp, len, metric_text, strlen(metric_text)) != NULL);
	for (const char *p = resp; (p = memmem(p + 1, len - (size_t)(p + 1 - resp), "\r\nHTTP/1.", 9));)
		CHECK(known_status((unsigned)atoi(p + 11)));
}

static void addr_spec(const uint8_t *data, size_t size)
{
	char spec[128], err[METRICS_ERR_SIZE] = "";
	size_t n = size < sizeof(spec) - 1 ? size : sizeof(spec) - 1;
	memcpy(spec, data, n);
	spec[n] = 0;
	struct sockaddr_storage ss;
	socklen_t sl;
	if (metrics_parse_addr(spec, &ss, &sl, err) != 0)
		CHECK(err[0] != 0);
	else
		CHECK(ss.ss_family == AF_INET || ss.ss_family == AF_INET6);
}

/* Sends `data`, half-closes, reads what comes until the server closes or
 * 5 ms pass in silence; then closes (with a reset if still open).  The
 * bytes read are in resp[0..*got). */
static char resp[MAX_RESP];

static void exchange(const uint8_t *data, size_t size, size_t *got)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(fd >= 0);
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)metrics_http_port(server)),
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	CHECK(connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0);
	size_t sent = 0;
	while (sent < size) {
		ssize_t w = send(fd, data + sent, size - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
		metrics_http_run(server);
		if (w < 0 && errno != EAGAIN)
			break; /* the server gave up on us first */
		if (w > 0)
			sent += (size_t)w;
	}
	shutdown(fd, SHUT_WR);
	*got = 0;
	bool closed = false;
	for (int quiet_ms = 0; !closed && quiet_ms < SILENCE_MS;) {
		metrics_http_run(server);
		ssize_t n = recv(fd, resp + *got, sizeof(resp) - *got, MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			closed = true;
		else if (n > 0 && (*got += (size_t)n) == sizeof(resp))
			*got = 0; /* a long pipeline: keep reading, check the tail loosely */
		else if (n < 0 && poll(&(struct pollfd){ .fd = metrics_http_fd(server), .events = POLLIN }, 1, 1) == 0)
			quiet_ms++;
	}
	if (!closed)
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &(struct linger){ .l_onoff = 1, .l_linger = 0 },
			   sizeof(struct linger));
	close(fd);
	metrics_http_run(server);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned inputs;
	if (size > MAX_REQ)
		return 0;
	addr_spec(data, size);
	setup();
	size_t got;
	exchange(data, size, &got);
	bool get_metrics = size >= 13 && !memcmp(data, "GET /metrics ", 13);
	check_responses(resp, got, get_metrics);

	if (++inputs % 64 == 0) {
		static const char scrape[] = "GET /metrics HTTP/1.1\r\nHost: 192.0.2.1\r\nConnection: close\r\n\r\n";
		unsigned before = renders;
		exchange((const uint8_t *)scrape, strlen(scrape), &got);
		CHECK(got > 12 && !memcmp(resp, "HTTP/1.1 200", 12));
		CHECK(memmem(resp, got, metric_text, strlen(metric_text)) != NULL);
		CHECK(renders == before + 1);
	}
	return 0;
}

/* Unit tests for src/report/metrics_http.c: the --metrics address parser,
 * and the server on 127.0.0.1 (an ephemeral port) driven from this thread
 * as the control loop drives it: paths, methods, and a half-open client
 * that must not hold up a second scrape. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "report/metrics_http.h"
#include "control/vxd.h"
#include "control/vxd_internal.h"

/* ---- metrics_parse_addr ------------------------------------------------- */

static void test_parse_good(void **state)
{
	(void)state;
	struct sockaddr_storage ss;
	socklen_t len;
	char err[METRICS_ERR_SIZE];
	assert_int_equal(metrics_parse_addr("192.0.2.1:9100", &ss, &len, err), 0);
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	assert_int_equal(ss.ss_family, AF_INET);
	assert_int_equal(len, sizeof(*sin));
	assert_int_equal(ntohs(sin->sin_port), 9100);
	assert_int_equal(ntohl(sin->sin_addr.s_addr), 0xc0000201);
	assert_int_equal(metrics_parse_addr("[2001:db8::1]:65535", &ss, &len, err), 0);
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	assert_int_equal(ss.ss_family, AF_INET6);
	assert_int_equal(ntohs(sin6->sin6_port), 65535);
	assert_int_equal(sin6->sin6_addr.s6_addr[0], 0x20);
	assert_int_equal(sin6->sin6_addr.s6_addr[15], 1);
}

static void test_parse_bad(void **state)
{
	(void)state;
	static const struct {
		const char *spec, *why;
	} cases[] = {
		{ "192.0.2.1", "expected ADDR:PORT" },
		{ ":9100", "expected ADDR:PORT" },
		{ "192.0.2.1:0", "port 0" },
		{ "192.0.2.1:65536", "expected a number 1..65535" },
		{ "192.0.2.1:-1", "expected a number 1..65535" },
		{ "192.0.2.1:", "expected a number 1..65535" },
		{ "192.0.2.1:91x", "expected a number 1..65535" },
		{ "localhost:9100", "not a numeric IPv4" },
		{ "192.0.2:9100", "not a numeric IPv4" },
		{ "2001:db8::1:9100", "not a numeric IPv4" },
		{ "[2001:db8::1:9100", "brackets" },
		{ "[192.0.2.1]:9100", "not a numeric IPv6" },
		{ "[]:9100", "brackets" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sockaddr_storage ss;
		socklen_t len;
		char err[METRICS_ERR_SIZE] = "";
		if (metrics_parse_addr(cases[i].spec, &ss, &len, err) != -EINVAL)
			fail_msg("%s: accepted", cases[i].spec);
		if (!strstr(err, cases[i].why))
			fail_msg("%s: \"%s\" does not say \"%s\"", cases[i].spec, err, cases[i].why);
	}
}

/* ---- the server ----------------------------------------------------------- */

static unsigned renders;

static int fake_render(void *ctx, char **text, size_t *len)
{
	(void)ctx;
	renders++;
	*text = strdup("# HELP x_total X.\n# TYPE x_total counter\nx_total 42\n");
	*len = strlen(*text);
	return 0;
}

static int setup(void **state)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct metrics_http *m;
	char err[METRICS_ERR_SIZE];
	if (metrics_http_start((struct sockaddr *)&sin, sizeof(sin), fake_render, NULL, &m, err) < 0) {
		fprintf(stderr, "metrics_http_start: %s\n", err);
		return -1;
	}
	renders = 0;
	*state = m;
	return 0;
}

static int teardown(void **state)
{
	metrics_http_stop(*state);
	return 0;
}

static int connect_to(const struct metrics_http *m)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				   .sin_port = htons((uint16_t)metrics_http_port(m)) };
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	return fd;
}

/* Sends req on a new connection and runs the server, as the control loop
 * would, until the whole reply is in (the server closes: Connection:
 * close) or 2 s pass.  Returns the reply (caller frees). */
static char *exchange(struct metrics_http *m, const char *req)
{
	int fd = connect_to(m);
	assert_int_equal(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	size_t cap = 65536, len = 0;
	char *buf = calloc(1, cap);
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd pf[2] = { { .fd = metrics_http_fd(m), .events = POLLIN }, { .fd = fd, .events = POLLIN } };
		poll(pf, 2, 20);
		metrics_http_run(m);
		if (pf[1].revents & (POLLIN | POLLHUP)) {
			ssize_t n = read(fd, buf + len, cap - 1 - len);
			if (n <= 0)
				break;
			len += (size_t)n;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec >= 2)
			fail_msg("no reply to %s", req);
	}
	close(fd);
	buf[len] = 0;
	return buf;
}

static void test_get_metrics(void **state)
{
	char *r = exchange(*state, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	assert_non_null(strstr(r, "HTTP/1.1 200"));
	assert_non_null(strstr(r, "Content-Type: text/plain; version=0.0.4; charset=utf-8"));
	assert_non_null(strstr(r, "\r\n\r\n# HELP x_total X.\n"));
	assert_non_null(strstr(r, "x_total 42\n"));
	assert_int_equal(renders, 1);
	free(r);
}

static void test_paths_and_methods(void **state)
{
	char *r = exchange(*state, "GET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	assert_non_null(strstr(r, "HTTP/1.1 404"));
	free(r);
	r = exchange(*state, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	assert_non_null(strstr(r, "HTTP/1.1 200"));
	assert_non_null(strstr(r, "/metrics"));
	free(r);
	r = exchange(*state, "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
	assert_non_null(strstr(r, "HTTP/1.1 405"));
	assert_non_null(strstr(r, "Allow: GET, HEAD"));
	free(r);
	r = exchange(*state, "DELETE /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	assert_non_null(strstr(r, "HTTP/1.1 405"));
	free(r);
	assert_int_equal(renders, 0); /* none of these took a snapshot */
}

/* A client that sent half a request and went silent holds one connection
 * slot, nothing else: a second scrape is answered at once. */
static void test_half_open_client(void **state)
{
	struct metrics_http *m = *state;
	int slow[3];
	for (int i = 0; i < 3; i++) {
		slow[i] = connect_to(m);
		assert_int_equal(write(slow[i], "GET /metr", 9), 9);
	}
	metrics_http_run(m);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	char *r = exchange(m, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_non_null(strstr(r, "x_total 42\n"));
	free(r);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	assert_true(s < 1.0); /* not after the slow clients' 5 s timeout */
	for (int i = 0; i < 3; i++)
		close(slow[i]);
}

/* The daemon's own render (metrics.c): a scrape on the control thread
 * takes a snapshot from the running worker (TSan watches this in
 * `make unit-tsan`). */
static void test_vxd_scrape(void **state)
{
	(void)state;
	struct vxd_options opts = { .ctl_path = NULL, .pool_size = 64, .quiet = true, .datapath = "user" };
	struct vxd *vxd;
	assert_int_equal(vxd_create(&opts, &vxd), 0);
	char spec[32], err[300];
	int ret = -1;
	for (unsigned i = 0; i < 20 && ret < 0; i++) {
		snprintf(spec, sizeof(spec), "127.0.0.1:%u", 20000 + (unsigned)(getpid() * 7 + i * 131) % 40000);
		ret = vxd_metrics_start(vxd, spec, err, sizeof(err));
	}
	assert_int_equal(ret, 0);
	char *r = exchange(vxd->metrics, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	assert_non_null(strstr(r, "HTTP/1.1 200"));
	assert_non_null(strstr(r, "\nvxswitch_drops_total{reason=\"vxlan_unknown_vni\"} 0\n"));
	assert_non_null(strstr(r, "vxswitch_cpu_seconds_total{thread=\"worker0\",mode=\"user\"}"));
	assert_non_null(strstr(r, "vxswitch_cpu_seconds_total{thread=\"control\",mode=\"system\"}"));
	free(r);
	/* A second --metrics on the same port: refused, with the reason. */
	struct vxd *other;
	assert_int_equal(vxd_create(&opts, &other), 0);
	assert_true(vxd_metrics_start(other, spec, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "bind: Address already in use"));
	vxd_destroy(other);
	vxd_destroy(vxd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_good),
		cmocka_unit_test(test_parse_bad),
		cmocka_unit_test_setup_teardown(test_get_metrics, setup, teardown),
		cmocka_unit_test_setup_teardown(test_paths_and_methods, setup, teardown),
		cmocka_unit_test_setup_teardown(test_half_open_client, setup, teardown),
		cmocka_unit_test(test_vxd_scrape),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

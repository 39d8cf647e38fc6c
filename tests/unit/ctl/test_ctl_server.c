/* Unit tests for src/ctl/ctl_server.c over a real Unix socket in a private
 * /tmp directory: request/reply (text, JSON, parse errors, refusals),
 * pipelined and split requests, the per-client bounds (oversize, garbage,
 * max clients), the socket's 0600 mode, and stale-socket handling; the
 * deadlines and the cap under a warped clock (request timeout, idle
 * timeout, slow readers, eviction of stalled clients, the "too many" line),
 * and the timerfd that wakes the daemon when a deadline passes; and the
 * failure accounting: each failure under its one counter (bad requests,
 * refusals, hang-ups mid-request and before the reply, running out of
 * fds), handle returning 0 for all of them and an error only when the
 * server itself is broken. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <inttypes.h>
#include <cmocka.h>

#include "ctl/ctl_proto.h"
#include "ctl/ctl_server.h"
#include "util/vlog.h"

/* The server's clock in these tests: it moves only when a test says. */
static uint64_t fake_now = 1000000000ull;

static uint64_t fake_clock(void)
{
	return fake_now;
}

static void advance_ms(uint64_t ms)
{
	fake_now += ms * 1000000ull;
}

struct fixture {
	char dir[64];
	char path[96];
	struct ctl_server *server;
	int n_dispatched;
	struct ctl_cmd last;
	struct ctl_stream *stream;   /* `capture`: the stream begun */
	int stops, gones;
	size_t batch_n;              /* -batch: its commands, last line, a pref */
	unsigned int batch_last_line;
	uint32_t batch_last_pref;
};

/* The owner of a test stream: ends it on STOP, forgets it on GONE. */
static void on_stream(void *arg, struct ctl_stream *st, enum ctl_stream_event ev)
{
	struct fixture *f = arg;
	assert_ptr_equal(st, f->stream);
	if (ev == CTL_STREAM_STOP) {
		f->stops++;
		ctl_stream_end(st, CTL_STATUS_OK, "stopped\n");
	} else {
		f->gones++;
	}
	f->stream = NULL;
}

static int dispatch(void *ctx, const struct ctl_cmd *cmd, struct ctl_print *out,
		    struct ctl_err *err)
{
	struct fixture *f = ctx;
	f->n_dispatched++;
	f->last = *cmd;
	switch (cmd->verb) {
	case CTL_VERSION:
		ctl_print_open_object(out, NULL);
		ctl_print_string(out, CTL_PRINT_ANY, "version", "vxswitch %s\n", "0.1");
		ctl_print_close_object(out);
		return 0;
	case CTL_PORT_DEL:
		snprintf(err->msg, sizeof(err->msg), "port %s: no such port", cmd->port.name);
		return -ENOENT;
	case CTL_FDB_FLUSH:
		return -EBUSY; /* no message: the server words it */
	case CTL_CAPTURE:
		ctl_print_string(out, CTL_PRINT_ANY, NULL, "%s", "discarded");
		f->stream = ctl_server_stream_begin(f->server, on_stream, f);
		assert_non_null(f->stream);
		return 0;
	case CTL_BATCH: /* its pointers live only during dispatch */
		f->batch_n = cmd->batch.n_cmds;
		f->batch_last_line = cmd->batch.lines[cmd->batch.n_cmds - 1];
		f->batch_last_pref = cmd->batch.cmds[cmd->batch.n_cmds - 1].filter.pref;
		return 0;
	case CTL_FDB_SHOW: /* a long reply, to exercise partial sends */
		for (int i = 0; i < 200000; i++)
			ctl_print_uint(out, CTL_PRINT_ANY, NULL, "entry %" PRIu64 "\n", (uint64_t)i);
		return 0;
	default:
		return 0;
	}
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_ctl_server_XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/vxswitchd.sock", f->dir);
	struct ctl_server_opts opts = { .path = f->path, .max_clients = 3, .clock = fake_clock };
	assert_int_equal(ctl_server_create(&opts, &f->server), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	ctl_server_destroy(f->server);
	rmdir(f->dir);
	free(f);
	return 0;
}

/* Run the server's loop as the daemon would: poll its fd, handle.  Handle
 * runs even when the fd stays quiet, as the timer would wake it (the fake
 * clock moves when the test says, the timerfd by the real one). */
static void pump(struct fixture *f, int rounds)
{
	for (int i = 0; i < rounds; i++) {
		struct pollfd pfd = { .fd = ctl_server_fd(f->server), .events = POLLIN };
		poll(&pfd, 1, 20);
		assert_int_equal(ctl_server_handle(f->server, dispatch, f), 0);
	}
}

static int connect_raw(struct fixture *f)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	strcpy(sun.sun_path, f->path);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	return fd;
}

static void send_request(int fd, bool json, int argc, const char *const *argv)
{
	uint8_t buf[sizeof(struct ctl_req_hdr) + CTL_REQ_MAX_BODY];
	int len = ctl_proto_encode_request(argc, argv, json, buf, sizeof(buf));
	assert_true(len > 0);
	assert_int_equal(write(fd, buf, (size_t)len), len);
}

/* Read one reply while pumping the server; returns its status. */
static int read_reply(struct fixture *f, int fd, char *text, size_t size)
{
	struct ctl_reply_hdr hdr;
	size_t got = 0;
	char *body = NULL;
	size_t want = sizeof(hdr);
	for (int rounds = 0; rounds < 2000; rounds++) {
		pump(f, 1);
		uint8_t *dst = body ? (uint8_t *)body + (got - sizeof(hdr)) : (uint8_t *)&hdr + got;
		ssize_t n = recv(fd, dst, want - got, MSG_DONTWAIT);
		if (n == 0)
			fail_msg("server closed the connection");
		if (n > 0)
			got += (size_t)n;
		if (got == sizeof(hdr) && !body) {
			assert_int_equal(ctl_proto_check_reply_hdr(&hdr), 0);
			body = malloc(hdr.size + 1);
			want += hdr.size;
		}
		if (body && got == want) {
			body[hdr.size] = '\0';
			snprintf(text, size, "%s", body);
			free(body);
			return (int)hdr.status;
		}
	}
	fail_msg("no reply");
	return -1;
}

/* The server closed this client: reading gives EOF (or a reset). */
static bool closed_by_server(struct fixture *f, int fd)
{
	char c;
	for (int rounds = 0; rounds < 200; rounds++) {
		pump(f, 1);
		ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			return true;
		if (n > 0)
			return false;
	}
	return false;
}

static void test_socket_is_root_only(void **state)
{
	struct fixture *f = *state;
	struct stat st;
	assert_int_equal(stat(f->path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
}

static void test_request_reply(void **state)
{
	struct fixture *f = *state;
	char text[256];
	int fd = connect_raw(f);

	const char *version[] = { "version" };
	send_request(fd, false, 1, version);
	assert_int_equal(read_reply(f, fd, text, sizeof(text)), CTL_STATUS_OK);
	assert_string_equal(text, "vxswitch 0.1\n");
	assert_int_equal(f->last.verb, CTL_VERSION);

	send_request(fd, true, 1, version);
	assert_int_equal(read_reply(f, fd, text, sizeof(text)), CTL_STATUS_OK);
	assert_string_equal(text, "{\"version\":\"0.1\"}\n");

	/* a parse error is answered by the server; dispatch never runs */
	int before = f->n_dispatched;
	const char *bad[] = { "port", "add", "vx0", "type", "vxlan", "vni", "16777216" };
	send_request(fd, false, 7, bad);
	assert_int_equal(read_reply(f, fd, text, sizeof(text)), CTL_STATUS_REFUSED);
	assert_string_equal(text, "word 7 \"16777216\": \"vni\" out of range, expected 0..16777215\n");
	assert_int_equal(f->n_dispatched, before);

	/* refusals by the dispatcher, with and without its own message */
	const char *del[] = { "port", "del", "tap9" };
	send_request(fd, false, 3, del);
	assert_int_equal(read_reply(f, fd, text, sizeof(text)), CTL_STATUS_REFUSED);
	assert_string_equal(text, "port tap9: no such port\n");
	const char *flush[] = { "fdb", "flush" };
	send_request(fd, true, 2, flush);
	assert_int_equal(read_reply(f, fd, text, sizeof(text)), CTL_STATUS_REFUSED);
	assert_string_equal(text, "fdb flush: Device or resource busy\n");

	struct ctl_server_stats st;
	ctl_server_get_stats(f->server, &st);
	assert_int_equal(st.accepted, 1);
	assert_int_equal(st.requests, 5);
	assert_int_equal(st.bad_requests, 1);
	assert_int_equal(st.refused, 2);
	assert_int_equal(st.errors, 0);
	assert_int_equal(ctl_server_n_clients(f->server), 1); /* refusals keep it */

	/* a clean close between requests is no failure */
	close(fd);
	pump(f, 3);
	ctl_server_get_stats(f->server, &st);
	assert_int_equal(st.disconnected, 1);
	assert_int_equal(st.hangups, 0);
	assert_int_equal(st.errors, 0);
}

/* Writes all of buf, pumping the server while the socket is full. */
static void send_all(struct fixture *f, int fd, const uint8_t *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_DONTWAIT);
		if (n < 0) {
			assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
			pump(f, 1);
			continue;
		}
		buf += n;
		len -= (size_t)n;
	}
}

static int send_batch(struct fixture *f, int fd, const char *name, const char *text, char *reply, size_t size)
{
	size_t cap = strlen(text) + 256;
	uint8_t *buf = malloc(cap);
	int len = ctl_proto_encode_batch(name, text, strlen(text), false, buf, cap);
	assert_true(len > CTL_REQ_MAX_BODY);
	send_all(f, fd, buf, (size_t)len);
	free(buf);
	return read_reply(f, fd, reply, size);
}

/* A batch request far over the ordinary request buffer: one dispatch of
 * every line; a bad line refused by the server naming NAME:LINE with no
 * dispatch; the connection serves ordinary requests after either. */
static void test_batch_request(void **state)
{
	struct fixture *f = *state;
	char text[512];
	size_t cap = 1000 * 128;
	char *batch = malloc(cap), *p = batch;
	p += sprintf(p, "# rules\n\n");
	for (int i = 0; i < 1000; i++)
		p += sprintf(p, "filter add dev vnet0 ingress pref %d protocol ip flower dst_port %d ip_proto tcp action drop\n",
			     i + 1, i + 1);
	int fd = connect_raw(f);
	int before = f->n_dispatched;
	assert_int_equal(send_batch(f, fd, "r.batch", batch, text, sizeof(text)), CTL_STATUS_OK);
	assert_int_equal(f->n_dispatched, before + 1);
	assert_int_equal(f->batch_n, 1000);
	assert_int_equal(f->batch_last_line, 1002);
	assert_int_equal(f->batch_last_pref, 1000);

	/* line 503 bad: refused by the server, nothing dispatched */
	char *l503 = strstr(batch, "pref 501 ");
	memcpy(l503, "pref 5x1 ", 9);
	assert_int_equal(send_batch(f, fd, "r.batch", batch, text, sizeof(text)), CTL_STATUS_REFUSED);
	assert_non_null(strstr(text, "r.batch:503: word 7 \"5x1\""));
	memcpy(l503, "pref 501 ", 9);
	char *l4 = strstr(batch, "filter add dev vnet0 ingress pref 2 ");
	memset(l4, ' ', (size_t)(strchr(l4, '\n') - l4));
	memcpy(l4, "port del vnet0", 14);
	assert_int_equal(send_batch(f, fd, "r.batch", batch, text, sizeof(text)), CTL_STATUS_REFUSED);
	assert_string_equal(text, "r.batch:4: word 1 \"port\": -batch takes filter add and filter del lines only\n");
	assert_int_equal(f->n_dispatched, before + 1);

	const char *version[] = { "version" };
	send_request(fd, false, 1, version);
	assert_int_equal(read_reply(f, fd, text, sizeof(text)), CTL_STATUS_OK);
	assert_string_equal(text, "vxswitch 0.1\n");
	close(fd);
	free(batch);
}

static void test_pipelined_and_split_requests(void **state)
{
	struct fixture *f = *state;
	char text[256];
	uint8_t buf[512];
	const char *a[] = { "stats", "port", "tap0" };
	const char *b[] = { "version" };
	int la = ctl_proto_encode_request(3, a, false, buf, sizeof(buf));
	int lb = ctl_proto_encode_request(1, b, false, buf + la, sizeof(buf) - (size_t)la);

	/* two requests in one write: two replies, in order */
	int fd = connect_raw(f);
	assert_int_equal(write(fd, buf, (size_t)(la + lb)), la + lb);
	assert_int_equal(read_reply(f, fd, text, sizeof(text)), CTL_STATUS_OK);
	assert_int_equal(f->last.verb, CTL_VERSION); /* both were served */
	assert_string_equal(text, "");
	assert_int_equal(read_reply(f, fd, text, sizeof(text)), CTL_STATUS_OK);
	assert_string_equal(text, "vxswitch 0.1\n");

	/* one request dribbled a byte at a time */
	for (int i = 0; i < la; i++) {
		assert_int_equal(write(fd, buf + i, 1), 1);
		pump(f, 1);
	}
	assert_int_equal(read_reply(f, fd, text, sizeof(text)), CTL_STATUS_OK);
	assert_int_equal(f->last.verb, CTL_STATS);
	assert_string_equal(f->last.port.name, "tap0");
	close(fd);
}

static void test_long_reply_is_sent_whole(void **state)
{
	struct fixture *f = *state;
	static char text[4 << 20];
	int fd = connect_raw(f);
	const char *show[] = { "fdb", "show" };
	send_request(fd, false, 2, show);
	assert_int_equal(read_reply(f, fd, text, sizeof(text)), CTL_STATUS_OK);
	assert_true(strncmp(text, "entry 0\nentry 1\n", 16) == 0);
	assert_non_null(strstr(text, "\nentry 199999\n"));
	close(fd);
}

static void test_oversize_request_drops_client(void **state)
{
	struct fixture *f = *state;
	int fd = connect_raw(f);
	struct ctl_req_hdr hdr = { .magic = CTL_PROTO_MAGIC, .argc = 1,
				   .size = CTL_REQ_MAX_BODY + 1 };
	assert_int_equal(write(fd, &hdr, sizeof(hdr)), (ssize_t)sizeof(hdr));
	assert_true(closed_by_server(f, fd));
	struct ctl_server_stats st;
	ctl_server_get_stats(f->server, &st);
	assert_int_equal(st.dropped_oversize, 1);
	assert_int_equal(st.disconnected, 1);
	assert_int_equal(st.hangups + st.errors + st.dropped_garbage, 0);
	assert_int_equal(ctl_server_n_clients(f->server), 0);
	assert_int_equal(f->n_dispatched, 0);
	close(fd);
}

static void test_garbage_drops_client(void **state)
{
	struct fixture *f = *state;
	int fd = connect_raw(f);
	const char http[] = "GET / HTTP/1.0\r\n\r\n";
	assert_int_equal(write(fd, http, sizeof(http) - 1), (ssize_t)sizeof(http) - 1);
	assert_true(closed_by_server(f, fd));
	struct ctl_server_stats st;
	ctl_server_get_stats(f->server, &st);
	assert_int_equal(st.dropped_garbage, 1);
	assert_int_equal(st.hangups + st.errors + st.dropped_oversize, 0);
	close(fd);

	/* a good client is still served afterwards */
	char text[64];
	fd = connect_raw(f);
	const char *version[] = { "version" };
	send_request(fd, false, 1, version);
	assert_int_equal(read_reply(f, fd, text, sizeof(text)), CTL_STATUS_OK);
	close(fd);
}

static void test_max_clients(void **state)
{
	struct fixture *f = *state;
	int fds[4];
	for (int i = 0; i < 3; i++) {
		fds[i] = connect_raw(f);
		pump(f, 2);
	}
	assert_int_equal(ctl_server_n_clients(f->server), 3);
	/* the backlog takes it; the server refuses it with one line, not a
	 * reset (nobody has stalled long enough to be evicted) */
	fds[3] = connect_raw(f);
	char text[96];
	assert_int_equal(read_reply(f, fds[3], text, sizeof(text)), CTL_STATUS_UNREACHABLE);
	assert_string_equal(text, "vxswitchd: too many control clients (3), try again\n");
	assert_true(closed_by_server(f, fds[3]));
	struct ctl_server_stats st;
	ctl_server_get_stats(f->server, &st);
	assert_int_equal(st.refused_full, 1);
	assert_int_equal(st.evicted, 0);
	assert_int_equal(st.max_clients, 3);
	assert_int_equal(st.clients, 3);
	assert_int_equal(ctl_server_n_clients(f->server), 3);

	/* when one leaves, a newcomer gets in */
	close(fds[0]);
	pump(f, 3);
	assert_int_equal(ctl_server_n_clients(f->server), 2);
	fds[0] = connect_raw(f);
	const char *version[] = { "version" };
	send_request(fds[0], false, 1, version);
	assert_int_equal(read_reply(f, fds[0], text, sizeof(text)), CTL_STATUS_OK);
	for (int i = 0; i < 4; i++)
		close(fds[i]);
}

static void test_hangup_mid_request(void **state)
{
	struct fixture *f = *state;
	uint8_t buf[256];
	const char *argv[] = { "stats", "port", "tap0" };
	int len = ctl_proto_encode_request(3, argv, false, buf, sizeof(buf));
	int fd = connect_raw(f);
	pump(f, 2);
	assert_int_equal(write(fd, buf, (size_t)len - 3), len - 3); /* not all */
	pump(f, 2);
	close(fd);
	pump(f, 3);
	struct ctl_server_stats st;
	ctl_server_get_stats(f->server, &st);
	assert_int_equal(st.hangups, 1);
	assert_int_equal(st.disconnected, 1);
	assert_int_equal(st.requests, 0);
	assert_int_equal(st.errors + st.dropped_garbage + st.dropped_oversize, 0);
	assert_int_equal(ctl_server_n_clients(f->server), 0);
	assert_int_equal(f->n_dispatched, 0);
}

static void test_hangup_before_reading_reply(void **state)
{
	struct fixture *f = *state;
	int fd = connect_raw(f);
	const char *show[] = { "fdb", "show" }; /* megabytes of reply */
	send_request(fd, false, 2, show);
	close(fd);
	pump(f, 5);
	struct ctl_server_stats st;
	ctl_server_get_stats(f->server, &st);
	assert_int_equal(st.requests, 1);
	assert_int_equal(f->n_dispatched, 1);
	assert_int_equal(st.hangups, 1);
	assert_int_equal(st.disconnected, 1);
	assert_int_equal(st.errors, 0);
	assert_int_equal(ctl_server_n_clients(f->server), 0);
}

/* A client that connects and sends nothing, and one that sends half a
 * request, are closed when request_timeout passes, told why; one that
 * completed its request is not, it is idle and waits for idle_timeout,
 * then just sees EOF. */
static void test_request_and_idle_timeouts(void **state)
{
	struct fixture *f = *state;
	uint8_t buf[256];
	const char *argv[] = { "stats", "port", "tap0" };
	int len = ctl_proto_encode_request(3, argv, false, buf, sizeof(buf));
	int silent = connect_raw(f), half = connect_raw(f), good = connect_raw(f);
	pump(f, 3);
	assert_int_equal(write(half, buf, (size_t)len - 3), len - 3);
	advance_ms(1000);
	const char *version[] = { "version" };
	char text[96];
	send_request(good, false, 1, version);
	assert_int_equal(read_reply(f, good, text, sizeof(text)), CTL_STATUS_OK);

	advance_ms(999);
	pump(f, 2);
	assert_int_equal(ctl_server_n_clients(f->server), 3);
	advance_ms(1);
	pump(f, 2);
	assert_int_equal(ctl_server_n_clients(f->server), 1);
	struct ctl_server_stats st;
	ctl_server_get_stats(f->server, &st);
	assert_int_equal(st.timed_out, 2);
	assert_int_equal(st.hangups + st.errors + st.idle_closed, 0);
	for (int i = 0; i < 2; i++) {
		int fd = i ? half : silent;
		assert_int_equal(read_reply(f, fd, text, sizeof(text)), CTL_STATUS_UNREACHABLE);
		assert_string_equal(text, "vxswitchd: no complete request within 2000 ms, closed\n");
		assert_true(closed_by_server(f, fd));
		close(fd);
	}

	/* the served client: idle from its reply on, closed after 60 s */
	advance_ms(CTL_SERVER_DEFAULT_IDLE_TIMEOUT_MS - 1001); /* reply read at +1000 */
	pump(f, 2);
	assert_int_equal(ctl_server_n_clients(f->server), 1);
	advance_ms(2);
	assert_true(closed_by_server(f, good)); /* EOF, no unasked-for reply */
	ctl_server_get_stats(f->server, &st);
	assert_int_equal(st.idle_closed, 1);
	assert_int_equal(st.timed_out, 2);
	close(good);
}

/* At the cap, a newcomer takes the slot of the client stalled longest,
 * once it has stalled evict_after (200 ms); a stalled client whose request
 * is waiting in its socket is served, not evicted. */
static void test_stalled_client_is_evicted(void **state)
{
	struct fixture *f = *state;
	int fds[3];
	for (int i = 0; i < 3; i++)
		fds[i] = connect_raw(f);
	pump(f, 3);
	assert_int_equal(ctl_server_n_clients(f->server), 3);
	advance_ms(CTL_SERVER_DEFAULT_EVICT_AFTER_MS);
	const char *version[] = { "version" };
	send_request(fds[0], false, 1, version); /* not read by the server yet */
	int late = connect_raw(f);
	send_request(late, false, 1, version);
	char text[128];
	assert_int_equal(read_reply(f, late, text, sizeof(text)), CTL_STATUS_OK);
	assert_int_equal(read_reply(f, fds[0], text, sizeof(text)), CTL_STATUS_OK);

	struct ctl_server_stats st;
	ctl_server_get_stats(f->server, &st);
	assert_int_equal(st.evicted, 1);
	assert_int_equal(st.refused_full, 0);
	assert_int_equal(st.requests, 2);
	assert_int_equal(ctl_server_n_clients(f->server), 3);
	int told = 0;
	for (int i = 1; i < 3; i++) {
		struct pollfd pfd = { .fd = fds[i], .events = POLLIN };
		if (poll(&pfd, 1, 0) != 1)
			continue;
		assert_int_equal(read_reply(f, fds[i], text, sizeof(text)), CTL_STATUS_UNREACHABLE);
		assert_string_equal(text, "vxswitchd: closed to make room for another control "
					  "client (3 in use), try again\n");
		told++;
	}
	assert_int_equal(told, 1);
	for (int i = 0; i < 3; i++)
		close(fds[i]);
	close(late);
}

/* A client that does not read its reply holds at most that reply and
 * stalls nobody: another client is served meanwhile; after reply_timeout
 * (5 s) it is dropped and counted. */
static void test_slow_reader_is_dropped(void **state)
{
	struct fixture *f = *state;
	int slow = connect_raw(f);
	const char *show[] = { "fdb", "show" }; /* megabytes: fills the socket */
	send_request(slow, false, 2, show);
	pump(f, 3);
	int other = connect_raw(f);
	const char *version[] = { "version" };
	char text[64];
	send_request(other, false, 1, version);
	assert_int_equal(read_reply(f, other, text, sizeof(text)), CTL_STATUS_OK);
	send_request(slow, false, 1, version); /* not read: one request at a time */

	advance_ms(CTL_SERVER_DEFAULT_REPLY_TIMEOUT_MS - 1);
	pump(f, 2);
	assert_int_equal(ctl_server_n_clients(f->server), 2);
	advance_ms(1);
	pump(f, 2);
	struct ctl_server_stats st;
	ctl_server_get_stats(f->server, &st);
	assert_int_equal(st.dropped_slow, 1);
	assert_int_equal(st.requests, 2);
	assert_int_equal(st.hangups + st.errors + st.timed_out, 0);
	assert_int_equal(ctl_server_n_clients(f->server), 1);
	close(slow);
	close(other);
}

/* The daemon calls handle only when the fd is readable: a deadline makes
 * it readable by itself (the timerfd), with nothing sent by anyone. */
static void test_deadline_wakes_the_fd(void **state)
{
	struct fixture *f = *state;
	ctl_server_destroy(f->server);
	struct ctl_server_opts opts = { .path = f->path, .request_timeout_ms = 50 };
	assert_int_equal(ctl_server_create(&opts, &f->server), 0);
	int fd = connect_raw(f);
	struct pollfd pfd = { .fd = ctl_server_fd(f->server), .events = POLLIN };
	assert_int_equal(poll(&pfd, 1, 1000), 1);
	assert_int_equal(ctl_server_handle(f->server, dispatch, f), 0);
	assert_int_equal(ctl_server_n_clients(f->server), 1);
	struct ctl_server_stats st;
	for (int i = 0; i < 20; i++) {
		ctl_server_get_stats(f->server, &st);
		if (st.timed_out)
			break;
		assert_int_equal(poll(&pfd, 1, 1000), 1); /* woken, not polled */
		assert_int_equal(ctl_server_handle(f->server, dispatch, f), 0);
	}
	assert_int_equal(st.timed_out, 1);
	assert_int_equal(ctl_server_n_clients(f->server), 0);
	close(fd);
}

/* Out of fds, a pending connection is closed at once (not left queued to
 * spin the daemon, not left hanging), counted and logged; the server goes
 * on serving once fds are back. */
static void test_out_of_fds_sheds_connection(void **state)
{
	struct fixture *f = *state;
	char *log = NULL;
	size_t log_size = 0;
	FILE *sink = open_memstream(&log, &log_size);
	vlog_set_sink(sink);

	int fd = connect_raw(f);
	int lowest_free = dup(0);
	assert_true(lowest_free >= 0);
	close(lowest_free);
	struct rlimit saved, tight;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
	tight = saved;
	tight.rlim_cur = (rlim_t)lowest_free; /* every fd below is in use */
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &tight), 0);
	struct pollfd pfd = { .fd = ctl_server_fd(f->server), .events = POLLIN };
	assert_int_equal(poll(&pfd, 1, 1000), 1);
	int ret = ctl_server_handle(f->server, dispatch, f);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
	assert_int_equal(ret, 0); /* not fatal */

	assert_true(closed_by_server(f, fd));
	close(fd);
	struct ctl_server_stats st;
	ctl_server_get_stats(f->server, &st);
	assert_int_equal(st.errors, 1);
	assert_int_equal(st.last_errno, EMFILE);
	assert_int_equal(st.accepted, 0);
	/* nothing left queued: the listener is quiet */
	assert_int_equal(poll(&pfd, 1, 0), 0);
	vlog_set_sink(NULL);
	fclose(sink);
	assert_non_null(strstr(log, "vxswitchd: warning: ctl: control socket: accept: "));
	free(log);

	char text[64];
	fd = connect_raw(f);
	const char *version[] = { "version" };
	send_request(fd, false, 1, version);
	assert_int_equal(read_reply(f, fd, text, sizeof(text)), CTL_STATUS_OK);
	close(fd);
}

/* The one fatal return: the server's own epoll set is unusable. */
static void test_broken_server_is_fatal(void **state)
{
	struct fixture *f = *state;
	int null = open("/dev/null", O_RDONLY);
	assert_true(null >= 0);
	/* destroy closes it later, whatever it now is */
	assert_int_equal(dup2(null, ctl_server_fd(f->server)), ctl_server_fd(f->server));
	close(null);
	assert_int_equal(ctl_server_handle(f->server, dispatch, f), -EINVAL);
}

struct call_args {
	const char *path;
	int ret, status;
	char *text;
	volatile int done;
};

static void *call_thread(void *arg)
{
	struct call_args *a = arg;
	const char *argv[] = { "version" };
	a->ret = ctl_proto_call(a->path, 1, argv, true, &a->status, &a->text);
	a->done = 1;
	return NULL;
}

static void test_blocking_client_call(void **state)
{
	struct fixture *f = *state;
	struct call_args a = { .path = f->path };
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, call_thread, &a), 0);
	for (int i = 0; i < 1000 && !a.done; i++)
		pump(f, 1);
	pthread_join(t, NULL);
	assert_int_equal(a.ret, 0);
	assert_int_equal(a.status, CTL_STATUS_OK);
	assert_string_equal(a.text, "{\"version\":\"0.1\"}\n");
	free(a.text);
}

/* Turned away at the cap, the blocking client gets the daemon's line and
 * status 2 (vxctl prints it and exits 2), not a reset, even when the
 * daemon answered and closed before the request was sent. */
static void test_blocking_call_turned_away(void **state)
{
	struct fixture *f = *state;
	int fds[3];
	for (int i = 0; i < 3; i++)
		fds[i] = connect_raw(f);
	pump(f, 3);
	struct call_args a = { .path = f->path };
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, call_thread, &a), 0);
	for (int i = 0; i < 1000 && !a.done; i++)
		pump(f, 1);
	pthread_join(t, NULL);
	assert_int_equal(a.ret, 0);
	assert_int_equal(a.status, CTL_STATUS_UNREACHABLE);
	assert_string_equal(a.text, "vxswitchd: too many control clients (3), try again\n");
	free(a.text);
	for (int i = 0; i < 3; i++)
		close(fds[i]);
}

/* Read one reply or chunk (header and body) while pumping the server. */
static void read_frame(struct fixture *f, int fd, struct ctl_reply_hdr *hdr, char *body, size_t size)
{
	size_t got = 0, want = sizeof(*hdr);
	for (int rounds = 0; rounds < 2000; rounds++) {
		pump(f, 1);
		uint8_t *dst = got < sizeof(*hdr) ? (uint8_t *)hdr + got : (uint8_t *)body + (got - sizeof(*hdr));
		ssize_t n = recv(fd, dst, want - got, MSG_DONTWAIT);
		if (n == 0)
			fail_msg("server closed the connection");
		if (n > 0)
			got += (size_t)n;
		if (got == sizeof(*hdr) && want == sizeof(*hdr)) {
			assert_int_equal(ctl_proto_check_reply_hdr(hdr), 0);
			assert_true(hdr->size < size);
			want += hdr->size;
		}
		if (got == want && want > sizeof(*hdr) - 1 && (got > sizeof(*hdr) || hdr->size == 0)) {
			body[hdr->size] = '\0';
			return;
		}
	}
	fail_msg("nothing came");
}

/* A client whose `capture` request the fixture answers with a stream. */
static int start_stream(struct fixture *f)
{
	int fd = connect_raw(f);
	const char *argv[] = { "capture", "vnet0" };
	send_request(fd, false, 2, argv);
	pump(f, 3);
	assert_non_null(f->stream);
	return fd;
}

static void test_stream_chunks_stop_and_final(void **state)
{
	struct fixture *f = *state;
	int fd = start_stream(f);
	assert_int_equal(ctl_stream_send(f->stream, "abc", 3), 0);
	assert_int_equal(ctl_stream_send(f->stream, "defg", 4), 0);
	struct ctl_reply_hdr hdr;
	char body[256];
	read_frame(f, fd, &hdr, body, sizeof(body));
	assert_int_equal(hdr.flags, CTL_REPLY_STREAM);
	assert_string_equal(body, "abc"); /* the printed "discarded" never went out */
	read_frame(f, fd, &hdr, body, sizeof(body));
	assert_string_equal(body, "defg");

	/* Past every deadline, a streaming client stays. */
	advance_ms(10 * 60 * 1000);
	pump(f, 3);
	assert_non_null(f->stream);
	assert_int_equal(ctl_server_n_clients(f->server), 1);

	/* Unread, the pending bytes are bounded: the owner is refused. */
	static char big[CTL_STREAM_MAX_CHUNK];
	int sent = 0, refused = 0;
	for (int i = 0; i < 64 && !refused; i++) {
		int ret = ctl_stream_send(f->stream, big, sizeof(big));
		if (ret == -ENOBUFS)
			refused++;
		else
			assert_int_equal(ret, 0), sent++;
	}
	assert_int_equal(refused, 1);
	assert_true(sent <= CTL_STREAM_MAX_PENDING / CTL_STREAM_MAX_CHUNK + 1);
	for (int i = 0; i < sent; i++) {
		static char chunk[CTL_STREAM_MAX_CHUNK + 1];
		read_frame(f, fd, &hdr, chunk, sizeof(chunk));
		assert_int_equal(hdr.size, CTL_STREAM_MAX_CHUNK);
	}

	/* The client's stop: shut its sending side; the owner ends the stream;
	 * the final reply comes, then EOF (a clean close). */
	shutdown(fd, SHUT_WR);
	read_frame(f, fd, &hdr, body, sizeof(body));
	assert_int_equal(f->stops, 1);
	assert_int_equal(hdr.flags, 0);
	assert_int_equal(hdr.status, CTL_STATUS_OK);
	assert_string_equal(body, "stopped\n");
	assert_true(closed_by_server(f, fd));
	struct ctl_server_stats st;
	ctl_server_get_stats(f->server, &st);
	assert_int_equal(st.timed_out + st.idle_closed + st.dropped_slow + st.errors, 0);
	close(fd);
}

static void test_stream_client_gone(void **state)
{
	struct fixture *f = *state;
	int fd = start_stream(f);
	close(fd);
	pump(f, 3);
	assert_int_equal(f->gones, 1);
	assert_null(f->stream);
	assert_int_equal(ctl_server_n_clients(f->server), 0);

	/* Destroying the server tells a running stream's owner too. */
	fd = start_stream(f);
	ctl_server_destroy(f->server);
	f->server = NULL;
	assert_int_equal(f->gones, 2);
	close(fd);
	/* outside dispatch, no stream can begin */
	struct ctl_server_opts opts = { .path = f->path, .clock = fake_clock };
	assert_int_equal(ctl_server_create(&opts, &f->server), 0);
	assert_null(ctl_server_stream_begin(f->server, on_stream, f));
}

static void test_stale_and_live_socket_files(void **state)
{
	struct fixture *f = *state;
	struct ctl_server_opts opts = { .path = f->path };
	struct ctl_server *second;
	/* a live server's socket is not stolen */
	assert_int_equal(ctl_server_create(&opts, &second), -EADDRINUSE);
	/* destroy removes the file; a stale file (nobody listening) is replaced */
	ctl_server_destroy(f->server);
	f->server = NULL;
	struct stat st;
	assert_int_equal(stat(f->path, &st), -1);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	strcpy(sun.sun_path, f->path);
	assert_int_equal(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	close(fd); /* leaves the file behind, nobody listening */
	assert_int_equal(ctl_server_create(&opts, &f->server), 0);
	/* a regular file in the way is not deleted */
	char file[128];
	snprintf(file, sizeof(file), "%s/plain", f->dir);
	fclose(fopen(file, "w"));
	opts.path = file;
	assert_int_equal(ctl_server_create(&opts, &second), -EEXIST);
	assert_int_equal(stat(file, &st), 0);
	unlink(file);
	ctl_server_destroy(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_socket_is_root_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_request_reply, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pipelined_and_split_requests, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batch_request, setup, teardown),
		cmocka_unit_test_setup_teardown(test_long_reply_is_sent_whole, setup, teardown),
		cmocka_unit_test_setup_teardown(test_oversize_request_drops_client, setup, teardown),
		cmocka_unit_test_setup_teardown(test_garbage_drops_client, setup, teardown),
		cmocka_unit_test_setup_teardown(test_max_clients, setup, teardown),
		cmocka_unit_test_setup_teardown(test_request_and_idle_timeouts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stalled_client_is_evicted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slow_reader_is_dropped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deadline_wakes_the_fd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hangup_mid_request, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hangup_before_reading_reply, setup, teardown),
		cmocka_unit_test_setup_teardown(test_out_of_fds_sheds_connection, setup, teardown),
		cmocka_unit_test_setup_teardown(test_broken_server_is_fatal, setup, teardown),
		cmocka_unit_test_setup_teardown(test_blocking_client_call, setup, teardown),
		cmocka_unit_test_setup_teardown(test_blocking_call_turned_away, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_chunks_stop_and_final, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_client_gone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale_and_live_socket_files, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

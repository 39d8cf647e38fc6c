/* The fixture both ctl_server test files share (test_ctl_server.c,
 * test_ctl_server_time.c): a server on a real Unix socket in a private
 * /tmp directory, with a clock that moves only when a test says
 * (advance_ms), a dispatch that records what it ran and answers a few
 * commands, and the raw client side: connect, send a request, read a
 * reply, tell a close by the server. */
#ifndef VX_TEST_CTL_SERVER_FIXTURE_H
#define VX_TEST_CTL_SERVER_FIXTURE_H

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

static inline uint64_t fake_clock(void)
{
	return fake_now;
}

static inline void advance_ms(uint64_t ms)
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
	uint64_t batch_busy_ms;      /* -batch: the fake clock moves this much */
};

/* The owner of a test stream: ends it on STOP, forgets it on GONE. */
static inline void on_stream(void *arg, struct ctl_stream *st, enum ctl_stream_event ev)
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

static inline int dispatch(void *ctx, const struct ctl_cmd *cmd, struct ctl_print *out,
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
		f->batch_last_pref = cmd->batch.cmds[cmd->batch.n_cmds - 1].filter.rule.pref;
		advance_ms(f->batch_busy_ms); /* a large batch takes seconds */
		return 0;
	case CTL_FDB_SHOW: /* a long reply, to exercise partial sends */
		for (int i = 0; i < 200000; i++)
			ctl_print_uint(out, CTL_PRINT_ANY, NULL, "entry %" PRIu64 "\n", (uint64_t)i);
		return 0;
	default:
		return 0;
	}
}

static inline int setup(void **state)
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

static inline int teardown(void **state)
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
static inline void pump(struct fixture *f, int rounds)
{
	for (int i = 0; i < rounds; i++) {
		struct pollfd pfd = { .fd = ctl_server_fd(f->server), .events = POLLIN };
		poll(&pfd, 1, 20);
		assert_int_equal(ctl_server_handle(f->server, dispatch, f), 0);
	}
}

static inline int connect_raw(struct fixture *f)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	strcpy(sun.sun_path, f->path);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	return fd;
}

static inline void send_request(int fd, bool json, int argc, const char *const *argv)
{
	uint8_t buf[sizeof(struct ctl_req_hdr) + CTL_REQ_MAX_BODY];
	int len = ctl_proto_encode_request(argc, argv, json, buf, sizeof(buf));
	assert_true(len > 0);
	assert_int_equal(write(fd, buf, (size_t)len), len);
}

/* Read one reply while pumping the server; returns its status. */
static inline int read_reply(struct fixture *f, int fd, char *text, size_t size)
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
static inline bool closed_by_server(struct fixture *f, int fd)
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


#endif

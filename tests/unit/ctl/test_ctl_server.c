/* Unit tests for src/ctl/ctl_server.c over a real Unix socket in a private
 * /tmp directory: request/reply (text, JSON, parse errors, refusals),
 * pipelined and split requests, -batch requests, the per-client bounds
 * (oversize, garbage, max clients), hang-ups mid-request and before the
 * reply, the socket's 0600 mode (0660 and the group's when shared),
 * stale-socket handling and the one fatal
 * return (a broken epoll set).  The deadlines, the fd cap, blocking client
 * calls and streams: test_ctl_server_time.c.  Fixture:
 * ctl_server_fixture.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "ctl_server_fixture.h"

static void test_socket_is_root_only(void **state)
{
	struct fixture *f = *state;
	struct stat st;
	assert_int_equal(stat(f->path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
}

/* vxswitchd --group: the file has the group and 0660 from the moment
 * the server exists (it is set before listen()), not some time after.
 * Root may chown to any group; as another user, the test's own. */
static void test_socket_shared_with_group(void **state)
{
	struct fixture *f = *state;
	ctl_server_destroy(f->server);
	gid_t group = geteuid() == 0 ? 4242 : getegid();
	struct ctl_server_opts opts = { .path = f->path, .share_group = true, .group = group };
	assert_int_equal(ctl_server_create(&opts, &f->server), 0);
	struct stat st;
	assert_int_equal(stat(f->path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0660);
	assert_int_equal(st.st_gid, group);
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
		cmocka_unit_test_setup_teardown(test_socket_shared_with_group, setup, teardown),
		cmocka_unit_test_setup_teardown(test_request_reply, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pipelined_and_split_requests, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batch_request, setup, teardown),
		cmocka_unit_test_setup_teardown(test_long_reply_is_sent_whole, setup, teardown),
		cmocka_unit_test_setup_teardown(test_oversize_request_drops_client, setup, teardown),
		cmocka_unit_test_setup_teardown(test_garbage_drops_client, setup, teardown),
		cmocka_unit_test_setup_teardown(test_max_clients, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hangup_mid_request, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hangup_before_reading_reply, setup, teardown),
		cmocka_unit_test_setup_teardown(test_broken_server_is_fatal, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale_and_live_socket_files, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

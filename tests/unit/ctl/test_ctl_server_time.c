/* Unit tests for src/ctl/ctl_server.c under a warped clock and at its
 * limits: the request and idle timeouts, slow readers, eviction of stalled
 * clients, the timerfd that wakes the daemon when a deadline passes,
 * running out of fds (each failure under its one counter, handle returning
 * 0), blocking client calls (answered, turned away), and streamed replies
 * (chunks, STOP, the final reply; a client gone mid-stream).  Requests and
 * bounds: test_ctl_server.c.  Fixture: ctl_server_fixture.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "ctl_server_fixture.h"

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

/* A batch request's clock is its progress, not its first byte; the time
 * the server spends serving one client (a batch of 100,000 rules takes
 * seconds) does not count against another awaiting its request. */
static void test_batch_deadlines(void **state)
{
	struct fixture *f = *state;
	static const char text[] = "filter add dev vnet0 ingress pref 7 protocol ip flower action drop\n";
	static uint8_t buf[8192];
	int len = ctl_proto_encode_batch("f", text, sizeof(text) - 1, false, buf, sizeof(buf));
	assert_true(len > 0);
	const char *argv[] = { "version" };
	uint8_t small[128];
	int slen = ctl_proto_encode_request(1, argv, false, small, sizeof(small));
	int batcher = connect_raw(f), waiter = -1;
	pump(f, 2);
	/* the batch in three parts, 1.5 s apart: 3 s in all, each part within 2 s */
	int part = len / 3;
	for (int i = 0; i < 3; i++) {
		int n = i < 2 ? part : len - 2 * part;
		if (i == 2)
			f->batch_busy_ms = 3000; /* its dispatch: 3 s */
		assert_int_equal(write(batcher, buf + i * part, (size_t)n), n);
		if (i == 1) { /* 1.5 s before the batch's dispatch */
			waiter = connect_raw(f);
			assert_int_equal(write(waiter, small, (size_t)slen - 2), slen - 2);
		}
		pump(f, 2);
		if (i < 2)
			advance_ms(1500);
	}
	char reply[128];
	assert_int_equal(read_reply(f, batcher, reply, sizeof(reply)), CTL_STATUS_OK);
	assert_int_equal(f->batch_n, 1);
	/* the waiter began its request 1.5 s before the batch's 3 s of
	 * dispatch: 4.5 s ago, 3 s of which it is not charged; still there,
	 * and served */
	assert_int_equal(ctl_server_n_clients(f->server), 2);
	assert_int_equal(write(waiter, small + slen - 2, 2), 2);
	assert_int_equal(read_reply(f, waiter, reply, sizeof(reply)), CTL_STATUS_OK);
	/* a batch that stops making progress: closed after 2 s */
	assert_int_equal(write(batcher, buf, (size_t)part), part);
	pump(f, 2);
	advance_ms(2001);
	pump(f, 2);
	struct ctl_server_stats st;
	ctl_server_get_stats(f->server, &st);
	assert_int_equal(st.timed_out, 1);
	close(batcher);
	close(waiter);
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


int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_request_and_idle_timeouts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batch_deadlines, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stalled_client_is_evicted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slow_reader_is_dropped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deadline_wakes_the_fd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_out_of_fds_sheds_connection, setup, teardown),
		cmocka_unit_test_setup_teardown(test_blocking_client_call, setup, teardown),
		cmocka_unit_test_setup_teardown(test_blocking_call_turned_away, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_chunks_stop_and_final, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_client_gone, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

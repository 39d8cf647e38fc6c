/* Unit tests for src/ctl/ctl_proto.c: request framing round trip, partial
 * input, every way a request can be malformed, and the streamed reply
 * (chunks, a stop by the client, the final reply) against a fake daemon. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#include "ctl/ctl_proto.h"

static uint8_t buf[sizeof(struct ctl_req_hdr) + CTL_REQ_MAX_BODY + 64];

static void test_request_round_trip(void **state)
{
	(void)state;
	const char *argv[] = { "port", "add", "vx0", "type", "vxlan" };
	int len = ctl_proto_encode_request(5, argv, true, buf, sizeof(buf));
	assert_int_equal(len, (int)(sizeof(struct ctl_req_hdr) + strlen("portaddvx0typevxlan") + 5));

	struct ctl_request req;
	/* every prefix is "need more", the whole is one request */
	for (int i = 0; i < len; i++)
		assert_int_equal(ctl_proto_decode_request(buf, (size_t)i, &req), 0);
	assert_int_equal(ctl_proto_decode_request(buf, (size_t)len, &req), len);
	assert_true(req.json);
	assert_int_equal(req.argc, 5);
	for (int i = 0; i < 5; i++)
		assert_string_equal(req.argv[i], argv[i]);

	/* two back to back: the first is decoded alone */
	const char *v[] = { "version" };
	int one = ctl_proto_encode_request(1, v, false, buf, sizeof(buf));
	memcpy(buf + one, buf, (size_t)one);
	assert_int_equal(ctl_proto_decode_request(buf, (size_t)one * 2, &req), one);
	assert_false(req.json);
	assert_string_equal(req.argv[0], "version");
}

/* A batch: the name, then the text as is (NULs and all); over the
 * ordinary body cap; prefixes need more; the limits of its header. */
static void test_batch_round_trip(void **state)
{
	(void)state;
	static uint8_t big[sizeof(struct ctl_req_hdr) + 3 * CTL_REQ_MAX_BODY];
	static char text[2 * CTL_REQ_MAX_BODY];
	memset(text, 'x', sizeof(text));
	text[10] = '\0';
	int len = ctl_proto_encode_batch("f.batch", text, sizeof(text), true, big, sizeof(big));
	assert_int_equal(len, (int)(sizeof(struct ctl_req_hdr) + 8 + sizeof(text)));
	assert_int_equal(ctl_proto_request_size(big, sizeof(struct ctl_req_hdr)), len);
	struct ctl_request req;
	assert_int_equal(ctl_proto_decode_request(big, (size_t)len - 1, &req), 0);
	assert_int_equal(ctl_proto_decode_request(big, (size_t)len, &req), len);
	assert_true(req.batch && req.json);
	assert_int_equal(req.argc, 1);
	assert_string_equal(req.argv[0], "f.batch");
	assert_int_equal(req.text_len, sizeof(text));
	assert_memory_equal(req.text, text, sizeof(text));
	/* an ordinary request is not a batch */
	const char *v[] = { "version" };
	int one = ctl_proto_encode_request(1, v, false, big, sizeof(big));
	assert_int_equal(ctl_proto_decode_request(big, (size_t)one, &req), one);
	assert_false(req.batch);
	assert_null(req.text);
	/* header limits: a batch body over CTL_REQ_MAX_BATCH, argc other than 1 */
	assert_int_equal(ctl_proto_encode_batch("f", text, CTL_REQ_MAX_BATCH, false, big, sizeof(big)), -E2BIG);
	assert_int_equal(ctl_proto_encode_batch("f", text, sizeof(text), false, big, 100), -ENOSPC);
	struct ctl_req_hdr hdr = { .magic = CTL_PROTO_MAGIC, .flags = CTL_REQ_BATCH, .argc = 1,
				   .size = CTL_REQ_MAX_BATCH + 1 };
	memcpy(big, &hdr, sizeof(hdr));
	assert_int_equal(ctl_proto_decode_request(big, sizeof(hdr), &req), -EMSGSIZE);
	hdr.size = 10;
	hdr.argc = 2;
	memcpy(big, &hdr, sizeof(hdr));
	assert_int_equal(ctl_proto_decode_request(big, sizeof(hdr) + 10, &req), -EPROTO);
	hdr.argc = 1;
	memcpy(big, &hdr, sizeof(hdr));
	memset(big + sizeof(hdr), 'a', 10); /* no NUL after the name */
	assert_int_equal(ctl_proto_decode_request(big, sizeof(hdr) + 10, &req), -EPROTO);
}

static void test_encode_limits(void **state)
{
	(void)state;
	static char big[CTL_REQ_MAX_BODY];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	const char *fits[] = { big };
	assert_true(ctl_proto_encode_request(1, fits, false, buf, sizeof(buf)) > 0);
	big[sizeof(big) - 1] = 'a'; /* one byte more than the cap with its NUL */
	char bigger[CTL_REQ_MAX_BODY + 1];
	memcpy(bigger, big, sizeof(big));
	bigger[sizeof(big)] = '\0';
	const char *too_big[] = { bigger };
	assert_int_equal(ctl_proto_encode_request(1, too_big, false, buf, sizeof(buf)), -E2BIG);
	const char *v[] = { "version" };
	assert_int_equal(ctl_proto_encode_request(0, v, false, buf, sizeof(buf)), -E2BIG);
	assert_int_equal(ctl_proto_encode_request(1, v, false, buf, 10), -ENOSPC);
}

static int decode_modified(void (*modify)(struct ctl_req_hdr *hdr, uint8_t *body), size_t *len)
{
	const char *argv[] = { "fdb", "show" };
	int n = ctl_proto_encode_request(2, argv, false, buf, sizeof(buf));
	struct ctl_req_hdr hdr;
	memcpy(&hdr, buf, sizeof(hdr));
	modify(&hdr, buf + sizeof(hdr));
	memcpy(buf, &hdr, sizeof(hdr));
	*len = (size_t)n;
	struct ctl_request req;
	return ctl_proto_decode_request(buf, (size_t)n, &req);
}

static void bad_magic(struct ctl_req_hdr *h, uint8_t *b) { (void)b; h->magic ^= 1; }
static void bad_flags(struct ctl_req_hdr *h, uint8_t *b) { (void)b; h->flags |= 0x80; }
static void zero_argc(struct ctl_req_hdr *h, uint8_t *b) { (void)b; h->argc = 0; }
static void huge_argc(struct ctl_req_hdr *h, uint8_t *b) { (void)b; h->argc = CTL_MAX_WORDS + 1; }
static void more_argc(struct ctl_req_hdr *h, uint8_t *b) { (void)b; h->argc = 3; }
static void less_argc(struct ctl_req_hdr *h, uint8_t *b) { (void)b; h->argc = 1; }
static void no_nul(struct ctl_req_hdr *h, uint8_t *b) { b[h->size - 1] = 'x'; }
static void huge_size(struct ctl_req_hdr *h, uint8_t *b) { (void)b; h->size = CTL_REQ_MAX_BODY + 1; }

static void test_malformed_requests(void **state)
{
	(void)state;
	size_t len;
	assert_int_equal(decode_modified(bad_magic, &len), -EPROTO);
	assert_int_equal(decode_modified(bad_flags, &len), -EPROTO);
	assert_int_equal(decode_modified(zero_argc, &len), -EPROTO);
	assert_int_equal(decode_modified(huge_argc, &len), -EPROTO);
	assert_int_equal(decode_modified(more_argc, &len), -EPROTO);
	assert_int_equal(decode_modified(less_argc, &len), -EPROTO);
	assert_int_equal(decode_modified(no_nul, &len), -EPROTO);
	assert_int_equal(decode_modified(huge_size, &len), -EMSGSIZE);

	/* garbage is refused from its first four bytes, without waiting */
	struct ctl_request req;
	assert_int_equal(ctl_proto_decode_request((const uint8_t *)"GET / HTTP/1.0\r\n", 4, &req),
			 -EPROTO);
	assert_int_equal(ctl_proto_decode_request((const uint8_t *)"GE", 2, &req), 0);
}

static void test_reply_header(void **state)
{
	(void)state;
	struct ctl_reply_hdr hdr;
	ctl_proto_reply_hdr(&hdr, CTL_STATUS_REFUSED, 10);
	assert_int_equal(ctl_proto_check_reply_hdr(&hdr), 0);
	hdr.status = 7;
	assert_int_equal(ctl_proto_check_reply_hdr(&hdr), -EPROTO);
	ctl_proto_reply_hdr(&hdr, CTL_STATUS_OK, CTL_REPLY_MAX_BODY + 1);
	assert_int_equal(ctl_proto_check_reply_hdr(&hdr), -EMSGSIZE);
	hdr.magic = 0;
	assert_int_equal(ctl_proto_check_reply_hdr(&hdr), -EPROTO);
}

static void test_chunk_header(void **state)
{
	(void)state;
	struct ctl_reply_hdr hdr;
	ctl_proto_chunk_hdr(&hdr, CTL_STREAM_MAX_CHUNK);
	assert_int_equal(hdr.flags, CTL_REPLY_STREAM);
	assert_int_equal(ctl_proto_check_reply_hdr(&hdr), 0);
	ctl_proto_chunk_hdr(&hdr, CTL_STREAM_MAX_CHUNK + 1);
	assert_int_equal(ctl_proto_check_reply_hdr(&hdr), -EMSGSIZE);
	ctl_proto_chunk_hdr(&hdr, 10);
	hdr.status = CTL_STATUS_REFUSED; /* a chunk carries no status */
	assert_int_equal(ctl_proto_check_reply_hdr(&hdr), -EPROTO);
	ctl_proto_reply_hdr(&hdr, CTL_STATUS_OK, 10);
	assert_int_equal(hdr.flags, 0);
	hdr.flags = 2; /* unknown */
	assert_int_equal(ctl_proto_check_reply_hdr(&hdr), -EPROTO);
}

/* A fake daemon: answers one request with `chunks` chunks "c0", "c1"...,
 * then (if wait_eof) waits for the client's EOF before the final reply. */
struct fake {
	int listen_fd;
	int chunks;
	bool wait_eof;
	bool saw_eof;
};

/* Best effort, and no cmocka assertion off the test's thread: a client
 * that refused the stream has closed already. */
static void send_reply(int fd, const struct ctl_reply_hdr *hdr, const char *body)
{
	if (send(fd, hdr, sizeof(*hdr), MSG_NOSIGNAL) == (ssize_t)sizeof(*hdr) && hdr->size &&
	    send(fd, body, hdr->size, MSG_NOSIGNAL) < 0) {
		/* the client is gone */
	}
}

static void *fake_daemon(void *arg)
{
	struct fake *f = arg;
	int fd = accept(f->listen_fd, NULL, NULL);
	uint8_t in[8192];
	ssize_t n = recv(fd, in, sizeof(in), 0);
	(void)n;
	struct ctl_reply_hdr hdr;
	for (int i = 0; i < f->chunks; i++) {
		char body[16];
		snprintf(body, sizeof(body), "c%d", i);
		ctl_proto_chunk_hdr(&hdr, (uint32_t)strlen(body));
		send_reply(fd, &hdr, body);
	}
	if (f->wait_eof)
		f->saw_eof = recv(fd, in, sizeof(in), 0) == 0;
	ctl_proto_reply_hdr(&hdr, CTL_STATUS_OK, 5);
	send_reply(fd, &hdr, "done\n");
	close(fd);
	return NULL;
}

struct got {
	char text[64];
	int calls;
	int stop_after;
};

static int on_chunk(void *ctx, const uint8_t *body, size_t size)
{
	struct got *g = ctx;
	strncat(g->text, (const char *)body, size);
	return ++g->calls == g->stop_after ? -1 : 0;
}

static void run_fake(struct fake *f, const char *path, pthread_t *th)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	unlink(path);
	f->listen_fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(f->listen_fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	assert_int_equal(listen(f->listen_fd, 1), 0);
	assert_int_equal(pthread_create(th, NULL, fake_daemon, f), 0);
}

static void test_stream_call(void **state)
{
	(void)state;
	char path[64];
	snprintf(path, sizeof(path), "/tmp/vxswitch-test-stream-%d", (int)getpid());
	const char *v[] = { "capture", "vnet0" };
	int status;
	char *text;
	pthread_t th;

	/* Three chunks in order; the client stops after the second (its
	 * shutdown is the EOF the daemon waits for); the third is not passed
	 * on; the final reply is read. */
	struct fake f = { .chunks = 3, .wait_eof = true };
	run_fake(&f, path, &th);
	struct got g = { .stop_after = 2 };
	struct ctl_stream_client sc = { .chunk = on_chunk, .ctx = &g };
	assert_int_equal(ctl_proto_call_stream(path, 2, v, false, &sc, &status, &text), 0);
	pthread_join(th, NULL);
	close(f.listen_fd);
	assert_true(f.saw_eof);
	assert_string_equal(g.text, "c0c1");
	assert_int_equal(status, CTL_STATUS_OK);
	assert_string_equal(text, "done\n");
	free(text);

	/* A plain call must not accept a stream. */
	f = (struct fake){ .chunks = 1 };
	run_fake(&f, path, &th);
	assert_int_equal(ctl_proto_call(path, 2, v, false, &status, &text), -EPROTO);
	pthread_join(th, NULL);
	close(f.listen_fd);

	/* The stop flag (as a signal handler sets it) shuts the sending side
	 * down too: set before the call, the daemon sees EOF after its chunks. */
	volatile sig_atomic_t stop = 1;
	f = (struct fake){ .chunks = 2, .wait_eof = true };
	run_fake(&f, path, &th);
	memset(&g, 0, sizeof(g));
	sc = (struct ctl_stream_client){ .chunk = on_chunk, .ctx = &g, .stop = &stop };
	assert_int_equal(ctl_proto_call_stream(path, 2, v, false, &sc, &status, &text), 0);
	pthread_join(th, NULL);
	close(f.listen_fd);
	assert_true(f.saw_eof);
	assert_string_equal(g.text, "c0c1");
	free(text);
	unlink(path);
}

static void test_call_without_daemon(void **state)
{
	(void)state;
	const char *v[] = { "version" };
	int status;
	char *text;
	assert_int_equal(ctl_proto_call("/tmp/vxswitch-test-no-such-socket", 1, v, false, &status,
					&text),
			 -ENOENT);
	assert_null(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_round_trip),
		cmocka_unit_test(test_encode_limits),
		cmocka_unit_test(test_batch_round_trip),
		cmocka_unit_test(test_malformed_requests),
		cmocka_unit_test(test_reply_header),
		cmocka_unit_test(test_chunk_header),
		cmocka_unit_test(test_stream_call),
		cmocka_unit_test(test_call_without_daemon),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

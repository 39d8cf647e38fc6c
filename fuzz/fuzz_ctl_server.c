/* fuzz_ctl_server: the control socket's request framing, through the real
 * server (ctl/ctl_server.c) on a real Unix socket, as a hostile local
 * client would write it.
 *
 * Input: one control byte, then the bytes the client sends.  The low four
 * bits of the control byte + 1 are the number of writes the bytes are cut
 * into (the server runs between them, so a header or body arrives in
 * pieces); bit 0x10: the client reads no reply before it has sent
 * everything (several requests queued on one connection).  The client then
 * shuts down its sending side and reads until the server closes.
 *
 * Whatever the bytes, the server must:
 *   - answer with well-formed replies only (ctl_proto_check_reply_hdr, a
 *     body no longer than the header says and within CTL_REPLY_MAX_BODY),
 *     at most one per request read plus one line saying why it closed;
 *   - close the connection (EOF) once the client has stopped sending, and
 *     count it: accepted and disconnected both move by one, no client left;
 *   - count every complete request once (requests = served + bad_requests
 *     + refused, served by the dispatcher) and the close under at most one
 *     reason (garbage, oversize, hangup; never `errors`);
 *   - hand the dispatcher only commands ctl_cmd_parse() accepted, which
 *     format back to text.
 * The server lives for the whole run, so state leaking from one client to
 * the next (a buffer not reset, a stale deadline) shows up too. */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_print.h"
#include "ctl/ctl_proto.h"
#include "ctl/ctl_server.h"
#include "util/vlog.h"

#define CHECK(cond)                          \
	do {                                 \
		if (!(cond))                 \
			__builtin_trap();    \
	} while (0)

enum { CTL_SPLIT = 0x0f, CTL_PIPELINE = 0x10, MAX_ROUNDS = 20000 };

static struct ctl_server *server;
static char sock_path[108];
static uint64_t n_dispatched;

static int dispatch(void *ctx, const struct ctl_cmd *cmd, struct ctl_print *out, struct ctl_err *err)
{
	(void)ctx;
	n_dispatched++;
	char text[4096];
	if (cmd->verb == CTL_BATCH) {
		/* A -batch file: every line of it is a command that prints. */
		for (size_t i = 0; i < cmd->batch.n_cmds; i++)
			CHECK(ctl_cmd_format(&cmd->batch.cmds[i], text, sizeof(text)) >= 0);
		snprintf(text, sizeof(text), "-batch %zu", cmd->batch.n_cmds);
	} else {
		CHECK(ctl_cmd_format(cmd, text, sizeof(text)) >= 0);
	}
	if (cmd->verb == CTL_PORT_DEL) { /* a refusal, answered with its line */
		snprintf(err->msg, sizeof(err->msg), "port %s: no such port", cmd->port.name);
		return -ENOENT;
	}
	if (cmd->verb == CTL_CAPTURE) /* no stream here: refused as the daemon refuses a busy capture */
		return -EBUSY;
	ctl_print_string(out, CTL_PRINT_ANY, "cmd", "%s\n", text);
	return 0;
}

static char sock_dir[64];

static void cleanup(void)
{
	ctl_server_destroy(server);
	unlink(sock_path);
	rmdir(sock_dir);
}

static void setup(void)
{
	if (server)
		return;
	vlog_set_level(VLOG_ERR);
	snprintf(sock_dir, sizeof(sock_dir), "/tmp/fuzz_ctl_server_XXXXXX");
	CHECK(mkdtemp(sock_dir) != NULL);
	snprintf(sock_path, sizeof(sock_path), "%s/sock", sock_dir);
	atexit(cleanup);
	struct ctl_server_opts opts = { .path = sock_path, .max_clients = 4 };
	CHECK(ctl_server_create(&opts, &server) == 0);
}

/* The client's side: reads what is there, checks each reply as it
 * completes.  Returns false at EOF. */
struct client {
	int fd;
	uint8_t buf[sizeof(struct ctl_reply_hdr) + 8192];
	size_t have;      /* bytes of the current reply read */
	size_t skip;      /* body bytes of a long reply still to discard */
	unsigned replies;
};

static bool client_read(struct client *c)
{
	for (;;) {
		uint8_t tmp[4096];
		ssize_t n = recv(c->fd, tmp, sizeof(tmp), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			return false;
		if (n < 0)
			return true;
		for (ssize_t i = 0; i < n; i++) {
			if (c->skip) {
				if (--c->skip == 0)
					c->have = 0;
				continue;
			}
			c->buf[c->have++] = tmp[i];
			if (c->have < sizeof(struct ctl_reply_hdr))
				continue;
			struct ctl_reply_hdr hdr;
			memcpy(&hdr, c->buf, sizeof(hdr));
			if (c->have == sizeof(hdr)) {
				CHECK(ctl_proto_check_reply_hdr(&hdr) == 0);
				CHECK(!(hdr.flags & CTL_REPLY_STREAM));
				CHECK(hdr.size <= CTL_REPLY_MAX_BODY);
				c->replies++;
				if (hdr.size > sizeof(c->buf) - sizeof(hdr))
					c->skip = hdr.size;
				else if (hdr.size == 0)
					c->have = 0;
			} else if (c->have == sizeof(hdr) + hdr.size) {
				c->have = 0;
			}
		}
	}
}

static void pump(void)
{
	CHECK(ctl_server_handle(server, dispatch, NULL) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 3 * (sizeof(struct ctl_req_hdr) + CTL_REQ_MAX_BODY))
		return 0;
	setup();
	unsigned pieces = (data[0] & CTL_SPLIT) + 1u;
	bool pipeline = data[0] & CTL_PIPELINE;
	data++;
	size--;

	struct ctl_server_stats before, after;
	ctl_server_get_stats(server, &before);
	uint64_t dispatched_before = n_dispatched;

	struct client c = { .fd = socket(AF_UNIX, SOCK_STREAM, 0) };
	CHECK(c.fd >= 0);
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	memcpy(sun.sun_path, sock_path, strlen(sock_path) + 1);
	CHECK(connect(c.fd, (struct sockaddr *)&sun, sizeof(sun)) == 0);

	bool open = true;
	size_t sent = 0, piece = size / pieces + 1;
	for (int rounds = 0; sent < size && rounds < MAX_ROUNDS; rounds++) {
		size_t n = size - sent < piece ? size - sent : piece;
		ssize_t w = send(c.fd, data + sent, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w < 0 && (errno == EPIPE || errno == ECONNRESET))
			break; /* the server closed on us: fine */
		if (w > 0)
			sent += (size_t)w;
		pump();
		if (!pipeline || w < 0)
			open = client_read(&c) && open;
	}
	shutdown(c.fd, SHUT_WR);
	for (int rounds = 0; open && rounds < MAX_ROUNDS; rounds++) {
		pump();
		open = client_read(&c);
		if (open && rounds > 100)
			poll(&(struct pollfd){ .fd = c.fd, .events = POLLIN }, 1, 1);
	}
	CHECK(!open); /* the server closed a client that stopped talking */
	close(c.fd);
	for (int rounds = 0; rounds < 100; rounds++) {
		pump();
		ctl_server_get_stats(server, &after);
		if (after.disconnected - before.disconnected == 1)
			break;
	}

	ctl_server_get_stats(server, &after);
	uint64_t requests = after.requests - before.requests;
	uint64_t served = n_dispatched - dispatched_before;
	uint64_t bad = after.bad_requests - before.bad_requests;
	uint64_t refused = after.refused - before.refused;
	CHECK(after.accepted - before.accepted == 1);
	CHECK(after.disconnected - before.disconnected == 1);
	CHECK(after.clients == 0);
	CHECK(after.errors == before.errors);
	CHECK(served + bad == requests);
	CHECK(refused <= served);
	uint64_t closes = (after.dropped_garbage - before.dropped_garbage) +
			  (after.dropped_oversize - before.dropped_oversize) + (after.hangups - before.hangups) +
			  (after.timed_out - before.timed_out) + (after.evicted - before.evicted);
	CHECK(closes <= 1);
	CHECK(c.replies <= requests + 1);
	return 0;
}

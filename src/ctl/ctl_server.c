/* ctl_server: non-blocking control socket server (see ctl_server.h).
 *
 * One epoll set holds the listener and every client; the daemon polls its
 * fd.  Each client is a small state machine:
 *   reading  (EPOLLIN):  bytes accumulate in `in` until a whole request is
 *                        there; it is parsed, dispatched, and the reply
 *                        built in `out`;
 *   writing  (EPOLLOUT): `out` drains; then requests already buffered are
 *                        served before reading again.
 * Clients closed while handling a batch of events are freed at the end of
 * the batch, so a later event in the same batch never touches freed
 * memory.  That is why there are twice max_clients slots: the cap counts
 * live clients, and an eviction admits a newcomer while the evicted one
 * still holds its slot until the batch ends.
 *
 * Deadlines: each client has one, set by its state (`since` is when that
 * state began): awaiting a request (request_timeout, or idle_timeout once
 * one was served and nothing of the next has come), or owing a reply
 * (reply_timeout).  After each batch the expired ones are closed and the
 * timerfd is armed for the earliest left, so the epoll fd turns readable
 * when it passes.
 *
 * Failure accounting: a client's functions only return a negative errno;
 * client_drop() alone decides which counter it goes under (the table in
 * ctl_server.h), so no path can close a client uncounted.  Clean EOF
 * between requests travels as -ESHUTDOWN, a peer that left mid-way as
 * -ECONNRESET. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ctl/ctl_server_internal.h"
#include "util/vlog.h"

enum {
	CTL_SERVER_BACKLOG = 64,
	CTL_SERVER_EVENTS = 32,     /* events handled per ctl_server_handle() */
	CTL_SERVER_ACCEPTS = 64,    /* accepts per ctl_server_handle() */
};

/* The epoll tag of the timer; the listener's is NULL. */
static char timer_tag;

static uint64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t ms_or(unsigned int ms, unsigned int dflt)
{
	return (uint64_t)(ms ? ms : dflt) * 1000000ull;
}

/* ---- setup ------------------------------------------------------------- */

/* A socket file left by a daemon that died is replaced; one a live daemon
 * answers on is not, and neither is anything that is not a socket. */
static int remove_stale_socket(const struct sockaddr_un *sun)
{
	struct stat st;
	if (lstat(sun->sun_path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int live = connect(fd, (const struct sockaddr *)sun, sizeof(*sun)) == 0;
	close(fd);
	if (live)
		return -EADDRINUSE;
	if (unlink(sun->sun_path) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

/* Bind, give the file its owner and mode (root only, or shared with
 * share->group), listen, and put the listener in a new epoll set. */
static int listen_on(struct ctl_server *s, const struct sockaddr_un *sun,
		     const struct ctl_server_opts *share)
{
	s->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->listen_fd < 0)
		return -errno;
	/* The file is born 0600 (umask); its final group and mode are set
	 * before anyone can connect (listen comes after).  umask is per
	 * process: call this before starting threads that create files. */
	mode_t old_umask = umask(0077);
	int ret = bind(s->listen_fd, (const struct sockaddr *)sun, sizeof(*sun)) < 0 ? -errno : 0;
	umask(old_umask);
	if (ret)
		goto err_close_listen;
	if ((share && chown(sun->sun_path, (uid_t)-1, share->group) < 0) ||
	    chmod(sun->sun_path, share ? 0660 : 0600) < 0 ||
	    listen(s->listen_fd, CTL_SERVER_BACKLOG) < 0) {
		ret = -errno;
		goto err_unlink;
	}
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0) {
		ret = -errno;
		goto err_unlink;
	}
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	struct epoll_event tev = { .events = EPOLLIN, .data.ptr = &timer_tag };
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->listen_fd, &ev) < 0 ||
	    epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->timer_fd, &tev) < 0) {
		ret = -errno;
		close(s->epfd);
		s->epfd = -1;
		goto err_unlink;
	}
	return 0;

err_unlink:
	unlink(sun->sun_path);
err_close_listen:
	close(s->listen_fd);
	s->listen_fd = -1;
	return ret;
}

static void set_limits(struct ctl_server *s, const struct ctl_server_opts *o)
{
	s->max_clients = o->max_clients ? o->max_clients : CTL_SERVER_DEFAULT_MAX_CLIENTS;
	s->n_slots = 2 * s->max_clients;
	s->max_reply = o->max_pending_out ? o->max_pending_out : CTL_REPLY_MAX_BODY;
	if (s->max_reply > CTL_REPLY_MAX_BODY)
		s->max_reply = CTL_REPLY_MAX_BODY;
	s->request_ns = ms_or(o->request_timeout_ms, CTL_SERVER_DEFAULT_REQUEST_TIMEOUT_MS);
	s->idle_ns = ms_or(o->idle_timeout_ms, CTL_SERVER_DEFAULT_IDLE_TIMEOUT_MS);
	s->reply_ns = ms_or(o->reply_timeout_ms, CTL_SERVER_DEFAULT_REPLY_TIMEOUT_MS);
	s->evict_ns = ms_or(o->evict_after_ms, CTL_SERVER_DEFAULT_EVICT_AFTER_MS);
	s->clock = o->clock ? o->clock : monotonic_ns;
	s->now = s->clock();
	s->stats.max_clients = s->max_clients;
}

int ctl_server_create(const struct ctl_server_opts *opts, struct ctl_server **out)
{
	const char *path = opts && opts->path ? opts->path : CTL_DEFAULT_SOCKET;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct ctl_server *s;
	int ret;

	if (strlen(path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	strcpy(sun.sun_path, path);

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->listen_fd = s->epfd = -1;
	strcpy(s->path, path);
	set_limits(s, opts ? opts : &(struct ctl_server_opts){ 0 });
	s->clients = calloc(s->n_slots, sizeof(*s->clients));
	if (!s->clients) {
		ret = -ENOMEM;
		goto err_free_server;
	}
	s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (s->spare_fd < 0) {
		ret = -errno;
		goto err_free_clients;
	}
	s->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (s->timer_fd < 0) {
		ret = -errno;
		goto err_close_spare;
	}
	ret = remove_stale_socket(&sun);
	if (!ret)
		ret = listen_on(s, &sun, opts && opts->share_group ? opts : NULL);
	if (ret)
		goto err_close_timer;
	*out = s;
	return 0;

err_close_timer:
	close(s->timer_fd);
err_close_spare:
	close(s->spare_fd);
err_free_clients:
	free(s->clients);
err_free_server:
	free(s);
	return ret;
}

static void client_free(struct ctl_client *c)
{
	ctl_stream_client_gone(c);
	if (c->fd >= 0)
		close(c->fd);
	free(c->out);
	ctl_client_release_in(c);
	free(c);
}

void ctl_server_destroy(struct ctl_server *s)
{
	if (!s)
		return;
	for (unsigned int i = 0; i < s->n_slots; i++)
		if (s->clients[i])
			client_free(s->clients[i]);
	free(s->clients);
	close(s->epfd);
	close(s->timer_fd);
	close(s->listen_fd);
	if (s->spare_fd >= 0)
		close(s->spare_fd);
	unlink(s->path);
	free(s);
}

int ctl_server_fd(const struct ctl_server *s)
{
	return s->epfd;
}

unsigned int ctl_server_n_clients(const struct ctl_server *s)
{
	return s->n_clients;
}

void ctl_server_get_stats(const struct ctl_server *s, struct ctl_server_stats *stats)
{
	*stats = s->stats;
	stats->clients = s->n_clients;
}

/* ---- clients ----------------------------------------------------------- */

/* Close now (the fd leaves the epoll set with it); free at batch end. */
static void client_close(struct ctl_server *s, struct ctl_client *c)
{
	if (c->dead)
		return;
	ctl_stream_client_gone(c); /* its owner stops producing now */
	close(c->fd);
	c->fd = -1;
	c->dead = true;
	s->n_clients--;
	s->stats.disconnected++;
}

static struct vlog_rate_limit error_rl = VLOG_RATE_LIMIT_INIT(5, 60);

/* A failure of ours (not the client's): counted, remembered, logged. */
static void count_error(struct ctl_server *s, int err, const char *what)
{
	s->stats.errors++;
	s->stats.last_errno = err;
	VLOG_WARN_RL(&error_rl, "ctl", "control socket: %s: %s", what, strerror(err));
}

/* Reasons a client is closed that are no errno of its I/O (negated, like
 * the errnos, when passed to client_drop). */
enum {
	DROP_TIMED_OUT = 100000, /* no complete request in time */
	DROP_IDLE,               /* idle between requests too long */
	DROP_SLOW,               /* reply unread in time */
	DROP_EVICTED,            /* stalled, and a newcomer needed the room */
};

/* One reply line straight to a socket we are about to close: best effort
 * (a fresh or idle socket takes ~100 bytes; if it does not, the peer sees
 * EOF, which it would have anyway). */
static void send_line(int fd, const char *fmt, unsigned int arg)
{
	char buf[sizeof(struct ctl_reply_hdr) + 128];
	struct ctl_reply_hdr hdr;
	int n = snprintf(buf + sizeof(hdr), sizeof(buf) - sizeof(hdr), fmt, arg);
	ctl_proto_reply_hdr(&hdr, CTL_STATUS_UNREACHABLE, (uint32_t)n);
	memcpy(buf, &hdr, sizeof(hdr));
	if (send(fd, buf, sizeof(hdr) + (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		/* the peer is gone or not reading: it sees the close */
	}
}

/* The server, not the client, ends this one: tell it why if it still
 * expects a reply to a request (see ctl_server.h). */
static void tell_why(struct ctl_server *s, struct ctl_client *c, int reason)
{
	if (c->out || c->stream || (c->served && !c->in_len))
		return;
	if (reason == DROP_TIMED_OUT)
		send_line(c->fd, "vxswitchd: no complete request within %u ms, closed\n",
			  (unsigned int)(s->request_ns / 1000000));
	else if (reason == DROP_EVICTED)
		send_line(c->fd, "vxswitchd: closed to make room for another control "
			  "client (%u in use), try again\n", s->max_clients);
}

/* Close a client and count why, from the errno its handler returned (or a
 * DROP_* reason). */
static void client_drop(struct ctl_server *s, struct ctl_client *c, int err)
{
	switch (-err) {
	case ESHUTDOWN:
		break; /* clean EOF between requests */
	case EPROTO:
		s->stats.dropped_garbage++;
		break;
	case EMSGSIZE:
		s->stats.dropped_oversize++;
		break;
	case ECONNRESET:
	case EPIPE:
		s->stats.hangups++;
		break;
	case DROP_TIMED_OUT:
		s->stats.timed_out++;
		break;
	case DROP_IDLE:
		s->stats.idle_closed++;
		break;
	case DROP_SLOW:
		s->stats.dropped_slow++;
		break;
	case DROP_EVICTED:
		s->stats.evicted++;
		break;
	default:
		count_error(s, -err, "client");
		break;
	}
	tell_why(s, c, -err);
	client_close(s, c);
}

static void reap_dead_clients(struct ctl_server *s)
{
	for (unsigned int i = 0; i < s->n_slots; i++) {
		if (s->clients[i] && s->clients[i]->dead) {
			client_free(s->clients[i]);
			s->clients[i] = NULL;
		}
	}
}

/* Is gid among the peer's supplementary groups (SO_PEERGROUPS)? */
static bool peer_in_group(int fd, gid_t gid)
{
	gid_t small[64], *groups = small;
	socklen_t len = sizeof(small);
	bool found = false;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0) {
		if (errno != ERANGE || !(groups = malloc(len)))
			return false;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)
			len = 0;
	}
	for (size_t i = 0; i < len / sizeof(gid_t) && !found; i++)
		found = groups[i] == gid;
	if (groups != small)
		free(groups);
	return found;
}

static bool peer_is_trusted(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return false;
	if (cred.uid == 0 || cred.uid == geteuid())
		return true;
	/* The socket group (vxswitchd --group): the daemon's own group. */
	gid_t ours = getegid();
	return ours != 0 && (cred.gid == ours || peer_in_group(fd, ours));
}

/* ---- client I/O ---------------------------------------------------- */

static int set_interest(struct ctl_server *s, struct ctl_client *c, bool writing)
{
	if (c->writing == writing)
		return 0;
	struct epoll_event ev = { .events = writing ? EPOLLOUT : EPOLLIN, .data.ptr = c };
	if (epoll_ctl(s->epfd, EPOLL_CTL_MOD, c->fd, &ev) < 0)
		return -errno;
	c->writing = writing;
	return 0;
}

/* Queue a reply: header + body. */
static int queue_reply(struct ctl_client *c, enum ctl_status status, const char *body,
		       size_t len)
{
	struct ctl_reply_hdr hdr;
	ctl_proto_reply_hdr(&hdr, status, (uint32_t)len);
	uint8_t *out = malloc(sizeof(hdr) + len);
	if (!out)
		return -ENOMEM;
	memcpy(out, &hdr, sizeof(hdr));
	memcpy(out + sizeof(hdr), body, len);
	c->out = out;
	c->out_len = sizeof(hdr) + len;
	c->out_off = 0;
	return 0;
}

static int queue_error(struct ctl_client *c, const char *msg)
{
	char line[CTL_ERR_SIZE + 2];
	int n = snprintf(line, sizeof(line), "%s\n", msg);
	return queue_reply(c, CTL_STATUS_REFUSED, line, (size_t)n);
}

/* The time the daemon spent serving `c` (a batch of 100,000 rules takes
 * seconds) does not count against the others awaiting a request: they
 * could not send meanwhile, so their request and idle clocks stop.  Reply
 * clocks run on (the reply was there to read, the socket buffer too). */
static void ctl_server_forgive(struct ctl_server *s, const struct ctl_client *c, uint64_t busy_ns)
{
	if (busy_ns < 1000000)
		return;
	s->now = s->clock(); /* what this turn does next happens now */
	for (unsigned int i = 0; i < s->n_slots; i++) {
		struct ctl_client *o = s->clients[i];
		if (o && o != c && !o->dead && !o->out && !o->stream)
			o->since += busy_ns;
	}
}

/* Parse, dispatch, and queue the reply of one request. */
static int serve_request(struct ctl_server *s, struct ctl_client *c,
			 const struct ctl_request *req, ctl_dispatch_fn dispatch, void *ctx)
{
	struct ctl_cmd cmd;
	struct ctl_err err;
	struct ctl_print out;
	int ret;

	struct ctl_config batch = { 0 };
	uint64_t t0 = s->clock();
	s->stats.requests++;
	if (req->batch ? ctl_batch_parse(req, &batch, &cmd, &err) : ctl_cmd_parse(req->argc, req->argv, &cmd, &err)) {
		s->stats.bad_requests++;
		ctl_server_forgive(s, c, s->clock() - t0);
		return queue_error(c, err.msg);
	}

	ctl_print_init(&out, req->json, s->max_reply);
	memset(&err, 0, sizeof(err));
	s->serving = c;
	s->serving_stream_ok = req->stream_ok;
	ret = dispatch(ctx, &cmd, &out, &err);
	s->serving = NULL;
	ctl_server_forgive(s, c, s->clock() - t0);
	ctl_config_release(&batch);
	if (c->stream) {
		/* The reply is the stream; a dispatcher that began one and then
		 * failed gets it ended with its error line. */
		ctl_print_release(&out);
		if (ret) {
			s->stats.refused++;
			ctl_stream_end(c->stream, CTL_STATUS_REFUSED, err.msg[0] ? err.msg : "refused\n");
		}
		return 0;
	}
	enum ctl_status status = ret == CTL_DONE_FINDINGS ? CTL_STATUS_FINDINGS : CTL_STATUS_OK;
	if (ret == CTL_DONE_FINDINGS)
		ret = 0;
	if (ret) {
		s->stats.refused++;
		if (!err.msg[0])
			snprintf(err.msg, sizeof(err.msg), "%s: %s", ctl_verb_name(cmd.verb),
				 strerror(ret < 0 ? -ret : ret));
		ret = queue_error(c, err.msg);
	} else {
		ret = ctl_print_finish(&out);
		if (ret) {
			s->stats.refused++;
			snprintf(err.msg, sizeof(err.msg), "%s: output failed: %s",
				 ctl_verb_name(cmd.verb), strerror(-ret));
			ret = queue_error(c, err.msg);
		} else {
			ret = queue_reply(c, status, ctl_print_data(&out), ctl_print_len(&out));
		}
	}
	ctl_print_release(&out);
	return ret;
}

/* Serve the first complete request in `in`, if there is one.  Returns 1 if
 * a reply was queued, 0 if more bytes are needed, negative to drop. */
static int serve_buffered(struct ctl_server *s, struct ctl_client *c,
			  ctl_dispatch_fn dispatch, void *ctx)
{
	struct ctl_request req;
	int used = ctl_proto_decode_request(c->in, c->in_len, &req);
	if (used <= 0)
		return used;
	int ret = serve_request(s, c, &req, dispatch, ctx);
	if (ret)
		return ret;
	c->since = s->now; /* the reply must be read from now */
	/* Keep any pipelined bytes behind this request for later. */
	memmove(c->in, c->in + used, c->in_len - (size_t)used);
	c->in_len -= (size_t)used;
	ctl_client_shrink(c);
	return 1;
}

int ctl_client_flush(struct ctl_client *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n < 0)
			return -errno;
		c->out_off += (size_t)n;
	}
	free(c->out);
	c->out = NULL;
	c->out_len = c->out_off = c->out_cap = 0;
	return 1;
}

/* Alternate serving buffered requests and sending their replies until the
 * socket is full or no complete request is left. */
static int client_progress(struct ctl_server *s, struct ctl_client *c,
			   ctl_dispatch_fn dispatch, void *ctx)
{
	for (;;) {
		if (c->stream) /* its reply is a stream: nothing else until it ends */
			return ctl_stream_arm(s, c);
		if (c->out) {
			int sent = ctl_client_flush(c);
			if (sent < 0)
				return sent;
			if (sent == 0)
				return set_interest(s, c, true);
			c->since = s->now; /* reply read: idle from now */
			c->served = true;
		}
		int served = serve_buffered(s, c, dispatch, ctx);
		if (served < 0)
			return served;
		if (served == 0)
			return set_interest(s, c, false);
	}
}

static int client_readable(struct ctl_server *s, struct ctl_client *c,
			   ctl_dispatch_fn dispatch, void *ctx)
{
	size_t room = c->in_cap - c->in_len;
	if (room == 0)
		return -EPROTO; /* cannot happen: a request fits the buffer */
	ssize_t n = recv(c->fd, c->in + c->in_len, room, MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -errno;
	if (n == 0) /* EOF: fine between requests, a hang-up within one */
		return c->in_len ? -ECONNRESET : -ESHUTDOWN;
	if (c->in_len == 0 && c->served)
		c->since = s->now; /* a new request begins */
	if (c->in != c->in_small)
		c->since = s->now; /* a batch (its own buffer): its clock is its progress */
	c->in_len += (size_t)n;
	int ret = ctl_client_fit_request(c);
	if (ret < 0)
		return ret;
	return client_progress(s, c, dispatch, ctx);
}

/* ---- admission ----------------------------------------------------- */

/* The client waiting longest for a request, if it has waited evict_ns. */
static struct ctl_client *oldest_stalled(struct ctl_server *s)
{
	struct ctl_client *oldest = NULL;
	for (unsigned int i = 0; i < s->n_slots; i++) {
		struct ctl_client *c = s->clients[i];
		if (!c || c->dead || c->out || c->stream || s->now - c->since < s->evict_ns)
			continue;
		if (!oldest || c->since < oldest->since)
			oldest = c;
	}
	return oldest;
}

/* At the cap, evict stalled clients until one live slot is free.  Each
 * gets a last read first: a request waiting in its socket is served (and
 * the client is no longer stalled), a hang-up is counted as one.  Returns
 * false when nobody can be evicted. */
static bool make_room(struct ctl_server *s, ctl_dispatch_fn dispatch, void *ctx)
{
	for (unsigned int tries = 0; s->n_clients >= s->max_clients; tries++) {
		struct ctl_client *c = oldest_stalled(s);
		if (!c || tries > 2 * s->max_clients)
			return false;
		size_t in_len = c->in_len;
		uint64_t since = c->since;
		int ret = client_readable(s, c, dispatch, ctx);
		if (ret < 0)
			client_drop(s, c, ret);
		else if (!c->out && c->in_len == in_len && c->since == since)
			client_drop(s, c, -DROP_EVICTED);
	}
	return true;
}

/* Over the cap: one line saying so, then close (not a bare reset). */
static void refuse_full(struct ctl_server *s, int fd)
{
	s->stats.refused_full++;
	send_line(fd, "vxswitchd: too many control clients (%u), try again\n", s->max_clients);
	close(fd);
}

/* Take on an accepted connection, or close it counting why not. */
static void admit_client(struct ctl_server *s, int fd, ctl_dispatch_fn dispatch, void *ctx)
{
	if (!peer_is_trusted(fd)) {
		s->stats.refused_cred++;
		close(fd);
		return;
	}
	/* Slots of clients closed in this batch free up at its end; there
	 * are twice as many slots as live clients may be. */
	unsigned int slot = 0;
	while (slot < s->n_slots && s->clients[slot])
		slot++;
	if (slot == s->n_slots || !make_room(s, dispatch, ctx)) {
		refuse_full(s, fd);
		return;
	}
	struct ctl_client *c = calloc(1, sizeof(*c));
	if (!c) {
		count_error(s, ENOMEM, "new client");
		close(fd);
		return;
	}
	c->fd = fd;
	c->since = s->now;
	ctl_client_release_in(c); /* in = in_small */
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		count_error(s, errno, "epoll_ctl(new client)");
		client_free(c);
		return;
	}
	s->clients[slot] = c;
	s->n_clients++;
	s->stats.accepted++;
}

/* Out of fds: give up the spare so one pending connection can be accepted
 * and closed (its client sees EOF instead of hanging), then take the spare
 * back.  Without it the connection stays queued and keeps the listener
 * readable, so the daemon's loop would spin. */
static void shed_connection(struct ctl_server *s)
{
	if (s->spare_fd >= 0)
		close(s->spare_fd);
	int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd >= 0)
		close(fd);
	s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

/* Returns 0, or a negative errno when the listener itself is unusable. */
static int accept_clients(struct ctl_server *s, ctl_dispatch_fn dispatch, void *ctx)
{
	for (int n = 0; n < CTL_SERVER_ACCEPTS; n++) {
		int fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0) {
			admit_client(s, fd, dispatch, ctx);
			continue;
		}
		int err = errno;
		switch (err) {
		case EAGAIN:
			return 0;
		case EINTR:
			continue;
		case ECONNABORTED: /* the client left before we took it */
			s->stats.hangups++;
			continue;
		case EBADF:
		case EINVAL:
		case ENOTSOCK:
		case EOPNOTSUPP:
		case EFAULT:
			return -err;
		case EMFILE:
		case ENFILE:
			count_error(s, err, "accept");
			shed_connection(s);
			return 0;
		default: /* ENOBUFS, ENOMEM, EPERM...: poll says when to retry */
			count_error(s, err, "accept");
			return 0;
		}
	}
	return 0;
}

/* ---- deadlines ------------------------------------------------------ */

static uint64_t client_deadline(const struct ctl_server *s, const struct ctl_client *c)
{
	if (c->stream && !c->stream->ended)
		return UINT64_MAX; /* a stream lasts as long as its owner wants */
	if (c->out)
		return c->since + s->reply_ns;
	if (c->in_len || !c->served)
		return c->since + s->request_ns;
	return c->since + s->idle_ns;
}

/* Close the clients past their deadline; arm the timer for the earliest
 * deadline left (disarm it when there is none). */
static void expire_clients(struct ctl_server *s)
{
	uint64_t next = UINT64_MAX;
	for (unsigned int i = 0; i < s->n_slots; i++) {
		struct ctl_client *c = s->clients[i];
		if (!c || c->dead)
			continue;
		uint64_t deadline = client_deadline(s, c);
		if (s->now < deadline) {
			next = deadline < next ? deadline : next;
			continue;
		}
		int reason = c->out ? DROP_SLOW : (c->in_len || !c->served) ? DROP_TIMED_OUT : DROP_IDLE;
		client_drop(s, c, -reason);
	}
	struct itimerspec its = { 0 };
	if (next != UINT64_MAX) {
		uint64_t d = next - s->now;
		its.it_value.tv_sec = (time_t)(d / 1000000000ull);
		its.it_value.tv_nsec = (long)(d % 1000000000ull);
	}
	if (timerfd_settime(s->timer_fd, 0, &its, NULL) < 0)
		count_error(s, errno, "timerfd_settime");
}

int ctl_server_handle(struct ctl_server *s, ctl_dispatch_fn dispatch, void *ctx)
{
	struct epoll_event events[CTL_SERVER_EVENTS];
	int n = epoll_wait(s->epfd, events, CTL_SERVER_EVENTS, 0);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;

	int fatal = 0;
	s->now = s->clock();
	for (int i = 0; i < n; i++) {
		struct ctl_client *c = events[i].data.ptr;
		if (!c) {
			int ret = accept_clients(s, dispatch, ctx);
			if (ret)
				fatal = ret;
			continue;
		}
		if (events[i].data.ptr == &timer_tag) {
			uint64_t ticks;
			if (read(s->timer_fd, &ticks, sizeof(ticks)) < 0) {
				/* EAGAIN: re-armed since it fired */
			}
			continue;
		}
		if (c->dead)
			continue;
		int ret;
		if (c->stream)
			ret = ctl_stream_client_event(s, c, events[i].events);
		else if (c->writing)
			ret = (events[i].events & (EPOLLERR | EPOLLHUP)) ? -ECONNRESET
									: client_progress(s, c, dispatch, ctx);
		else
			ret = client_readable(s, c, dispatch, ctx);
		if (ret < 0)
			client_drop(s, c, ret);
	}
	s->now = s->clock();
	expire_clients(s);
	reap_dead_clients(s);
	return fatal;
}

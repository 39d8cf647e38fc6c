/* ctl_server_stream: streamed replies on the control socket (ctl_server.h,
 * "Streamed replies"; the framing is in ctl_proto.h).
 *
 * A streaming client's interest is EPOLLIN (to see its stop: EOF or any
 * byte) plus EPOLLOUT while chunks wait, and nothing once it has shut its
 * sending side (a level-triggered EOF would fire forever).  Chunks are
 * appended to the client's `out` buffer, bounded by
 * CTL_STREAM_MAX_PENDING; what the socket does not take waits there, and
 * the owner sees the room shrink (ctl_stream_room) and holds back: that is
 * how a slow reader slows the producer without blocking anyone.
 *
 * Sends from outside ctl_server_handle() never close a client: a failure
 * is remembered in the stream, and the next event on its fd (a broken
 * peer always has one: EPOLLHUP/EPOLLERR or EOF) drops it through the
 * server's one accounting path. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "ctl/ctl_server_internal.h"

struct ctl_stream *ctl_server_stream_begin(struct ctl_server *s, ctl_stream_event_fn *fn, void *arg)
{
	struct ctl_client *c = s->serving;
	if (!c || c->stream || !fn) {
		errno = EINVAL;
		return NULL;
	}
	struct ctl_stream *st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	st->server = s;
	st->client = c;
	st->fn = fn;
	st->arg = arg;
	st->events = c->writing ? EPOLLOUT : EPOLLIN;
	c->stream = st;
	return st;
}

size_t ctl_stream_room(const struct ctl_stream *st)
{
	const struct ctl_client *c = st->client;
	size_t pending = c->out_len - c->out_off;
	if (st->ended || st->err || pending >= CTL_STREAM_MAX_PENDING)
		return 0;
	return CTL_STREAM_MAX_PENDING - pending;
}

/* Header and body at the end of `out`, moving what is left to the front. */
static int append(struct ctl_client *c, const struct ctl_reply_hdr *hdr, const void *body, size_t len)
{
	if (c->out_off) {
		memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
		c->out_len -= c->out_off;
		c->out_off = 0;
	}
	size_t need = c->out_len + sizeof(*hdr) + len;
	if (need > c->out_cap) {
		size_t cap = c->out_cap * 2 > need ? c->out_cap * 2 : need;
		uint8_t *out = realloc(c->out, cap);
		if (!out)
			return -ENOMEM;
		c->out = out;
		c->out_cap = cap;
	}
	memcpy(c->out + c->out_len, hdr, sizeof(*hdr));
	if (len)
		memcpy(c->out + c->out_len + sizeof(*hdr), body, len);
	c->out_len = need;
	return 0;
}

int ctl_stream_arm(struct ctl_server *s, struct ctl_client *c)
{
	struct ctl_stream *st = c->stream;
	/* A producer that wants room keeps EPOLLOUT on even with nothing
	 * queued: a writable socket is its turn (CTL_STREAM_ROOM). */
	bool out = c->out || (st->want_room && !st->ended);
	uint32_t events = (st->peer_eof ? 0 : EPOLLIN) | (out ? EPOLLOUT : 0);
	if (events == st->events)
		return 0;
	struct epoll_event ev = { .events = events, .data.ptr = c };
	if (epoll_ctl(s->epfd, EPOLL_CTL_MOD, c->fd, &ev) < 0)
		return -errno;
	st->events = events;
	return 0;
}

/* The final reply is all sent: the client is an ordinary one again, idle
 * from now (one that shut its side down reads as EOF next: a clean close). */
static int finish(struct ctl_server *s, struct ctl_client *c)
{
	free(c->stream);
	c->stream = NULL;
	c->served = true;
	c->since = s->clock();
	c->writing = false;
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
	return epoll_ctl(s->epfd, EPOLL_CTL_MOD, c->fd, &ev) < 0 ? -errno : 0;
}

/* Send what the socket takes now; remember a failure. */
static void push(struct ctl_stream *st)
{
	struct ctl_client *c = st->client;
	struct ctl_server *s = st->server;
	if (st->err)
		return;
	int ret = ctl_client_flush(c);
	if (ret == 1 && st->ended)
		ret = finish(s, c);
	else if (ret >= 0)
		ret = ctl_stream_arm(s, c);
	if (ret < 0)
		st->err = ret;
}

int ctl_stream_send(struct ctl_stream *st, const void *data, size_t len)
{
	if (st->err)
		return st->err;
	if (st->ended)
		return -EPIPE;
	if (len > CTL_STREAM_MAX_CHUNK)
		return -EMSGSIZE;
	if (len + sizeof(struct ctl_reply_hdr) > ctl_stream_room(st))
		return -ENOBUFS;
	struct ctl_reply_hdr hdr;
	ctl_proto_chunk_hdr(&hdr, (uint32_t)len);
	int ret = append(st->client, &hdr, data, len);
	if (ret < 0)
		return ret;
	push(st);
	return 0;
}

void ctl_stream_end(struct ctl_stream *st, enum ctl_status status, const char *text)
{
	if (st->ended)
		return;
	struct ctl_reply_hdr hdr;
	size_t len = text ? strlen(text) : 0;
	ctl_proto_reply_hdr(&hdr, status, (uint32_t)len);
	st->ended = true;
	st->client->since = st->server->clock(); /* the final reply is due from now */
	int ret = append(st->client, &hdr, text, len);
	if (ret < 0 && !st->err)
		st->err = ret;
	push(st); /* may free st */
}

int ctl_stream_client_event(struct ctl_server *s, struct ctl_client *c, uint32_t events)
{
	struct ctl_stream *st = c->stream;
	(void)s; /* the stream knows its server */
	if (st->err)
		return st->err;
	/* Gone both ways (closed, not just shut for sending): nobody reads
	 * the rest, so the stream is dropped, not ended. */
	if (events & (EPOLLERR | EPOLLHUP))
		return -ECONNRESET;
	if (events & EPOLLIN) {
		uint8_t scratch[512];
		ssize_t n = recv(c->fd, scratch, sizeof(scratch), MSG_DONTWAIT);
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return -errno;
		if (n == 0)
			st->peer_eof = true;
		if (n >= 0 && !st->stop_told && !st->ended) {
			/* Its stop: the owner ends the stream (now or soon). */
			st->stop_told = true;
			st->fn(st->arg, st, CTL_STREAM_STOP);
			if (!c->stream)
				return 0; /* ended and all sent already */
			if (st->err)
				return st->err;
		}
	}
	push(st);
	if (!c->stream)
		return 0;
	if (!st->err && st->want_room && !st->ended && !st->stop_told &&
	    ctl_stream_room(st) >= CTL_STREAM_MAX_PENDING / 2) {
		st->fn(st->arg, st, CTL_STREAM_ROOM);
		if (!c->stream)
			return 0;
	}
	return st->err;
}

void ctl_stream_want_room(struct ctl_stream *st, bool want)
{
	st->want_room = want;
	if (!st->ended && !st->err) {
		int ret = ctl_stream_arm(st->server, st->client);
		if (ret < 0)
			st->err = ret;
	}
}

bool ctl_server_stream_ok(const struct ctl_server *s)
{
	return s->serving && s->serving_stream_ok;
}

void ctl_stream_client_gone(struct ctl_client *c)
{
	struct ctl_stream *st = c->stream;
	if (!st)
		return;
	c->stream = NULL;
	if (!st->ended)
		st->fn(st->arg, st, CTL_STREAM_GONE);
	free(st);
}

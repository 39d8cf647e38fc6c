/* ctl_proto: request/reply framing on the control socket (see ctl_proto.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl/ctl_proto.h"

int ctl_proto_encode_request(int argc, const char *const *argv, bool json,
			     uint8_t *buf, size_t size)
{
	size_t body = 0;

	if (argc < 1 || argc > CTL_MAX_WORDS)
		return -E2BIG;
	for (int i = 0; i < argc; i++) {
		body += strlen(argv[i]) + 1;
		if (body > CTL_REQ_MAX_BODY)
			return -E2BIG;
	}
	if (size < sizeof(struct ctl_req_hdr) + body)
		return -ENOSPC;

	struct ctl_req_hdr hdr = {
		.magic = CTL_PROTO_MAGIC,
		.flags = json ? CTL_REQ_JSON : 0,
		.argc = (uint16_t)argc,
		.size = (uint32_t)body,
	};
	memcpy(buf, &hdr, sizeof(hdr));
	uint8_t *w = buf + sizeof(hdr);
	for (int i = 0; i < argc; i++) {
		size_t n = strlen(argv[i]) + 1;
		memcpy(w, argv[i], n);
		w += n;
	}
	return (int)(sizeof(hdr) + body);
}

int ctl_proto_encode_batch(const char *name, const char *text, size_t len, bool json,
			   uint8_t *buf, size_t size)
{
	size_t name_len = strlen(name) + 1;
	if (len > CTL_REQ_MAX_BATCH || name_len > CTL_REQ_MAX_BATCH - len)
		return -E2BIG;
	size_t body = name_len + len;
	if (size < sizeof(struct ctl_req_hdr) + body)
		return -ENOSPC;
	struct ctl_req_hdr hdr = {
		.magic = CTL_PROTO_MAGIC,
		.flags = (uint16_t)(CTL_REQ_BATCH | (json ? CTL_REQ_JSON : 0)),
		.argc = 1,
		.size = (uint32_t)body,
	};
	memcpy(buf, &hdr, sizeof(hdr));
	memcpy(buf + sizeof(hdr), name, name_len);
	if (len)
		memcpy(buf + sizeof(hdr) + name_len, text, len);
	return (int)(sizeof(hdr) + body);
}

/* The header's checks; 0, or decode's negative. */
static int check_hdr(const struct ctl_req_hdr *hdr)
{
	if (hdr->flags & ~CTL_REQ_FLAGS_KNOWN)
		return -EPROTO;
	bool batch = hdr->flags & CTL_REQ_BATCH;
	if (hdr->argc < 1 || hdr->argc > (batch ? 1 : CTL_MAX_WORDS))
		return -EPROTO;
	if (hdr->size > (batch ? CTL_REQ_MAX_BATCH : CTL_REQ_MAX_BODY))
		return -EMSGSIZE;
	if (hdr->size < hdr->argc)
		return -EPROTO; /* every word has at least its NUL */
	return 0;
}

long ctl_proto_request_size(const uint8_t *buf, size_t len)
{
	struct ctl_req_hdr hdr;

	/* Check the magic as soon as it is in, so a client that speaks
	 * something else is dropped without waiting for more bytes. */
	if (len >= sizeof(hdr.magic)) {
		uint32_t magic;
		memcpy(&magic, buf, sizeof(magic));
		if (magic != CTL_PROTO_MAGIC)
			return -EPROTO;
	}
	if (len < sizeof(hdr))
		return 0;
	memcpy(&hdr, buf, sizeof(hdr));
	int ret = check_hdr(&hdr);
	return ret < 0 ? ret : (long)(sizeof(hdr) + hdr.size);
}

/* A batch body: the name, NUL, then the text. */
static int decode_batch(const char *body, const char *end, struct ctl_request *req)
{
	const char *nul = memchr(body, '\0', (size_t)(end - body));
	if (!nul)
		return -EPROTO;
	req->argv[0] = body;
	req->argc = 1;
	req->text = nul + 1;
	req->text_len = (size_t)(end - nul - 1);
	return 0;
}

int ctl_proto_decode_request(const uint8_t *buf, size_t len, struct ctl_request *req)
{
	struct ctl_req_hdr hdr;
	long need = ctl_proto_request_size(buf, len);
	if (need <= 0)
		return (int)need;
	if (len < (size_t)need)
		return 0;
	memcpy(&hdr, buf, sizeof(hdr));
	const char *body = (const char *)buf + sizeof(hdr);
	const char *end = body + hdr.size;
	req->json = hdr.flags & CTL_REQ_JSON;
	req->batch = hdr.flags & CTL_REQ_BATCH;
	req->stream_ok = hdr.flags & CTL_REQ_STREAM_OK;
	req->text = NULL;
	req->text_len = 0;
	if (req->batch)
		return decode_batch(body, end, req) < 0 ? -EPROTO : (int)need;

	/* Exactly argc NUL-terminated words fill the body. */
	int argc = 0;
	if (end[-1] != '\0')
		return -EPROTO;
	for (const char *w = body; w < end; w += strlen(w) + 1) {
		if (argc == hdr.argc)
			return -EPROTO;
		req->argv[argc++] = w;
	}
	if (argc != hdr.argc)
		return -EPROTO;
	req->argc = argc;
	return (int)need;
}

void ctl_proto_reply_hdr(struct ctl_reply_hdr *hdr, enum ctl_status status, uint32_t size)
{
	hdr->magic = CTL_PROTO_MAGIC;
	hdr->status = status;
	hdr->size = size;
	hdr->flags = 0;
}

void ctl_proto_chunk_hdr(struct ctl_reply_hdr *hdr, uint32_t size)
{
	ctl_proto_reply_hdr(hdr, CTL_STATUS_OK, size);
	hdr->flags = CTL_REPLY_STREAM;
}

int ctl_proto_check_reply_hdr(const struct ctl_reply_hdr *hdr)
{
	if (hdr->magic != CTL_PROTO_MAGIC || hdr->status > CTL_STATUS_FINDINGS)
		return -EPROTO;
	if (hdr->flags & ~CTL_REPLY_FLAGS_KNOWN)
		return -EPROTO;
	if ((hdr->flags & CTL_REPLY_STREAM) && hdr->status != CTL_STATUS_OK)
		return -EPROTO;
	if (hdr->size > ((hdr->flags & CTL_REPLY_STREAM) ? CTL_STREAM_MAX_CHUNK : CTL_REPLY_MAX_BODY))
		return -EMSGSIZE;
	return 0;
}

/* ---- blocking client --------------------------------------------------- */

static int write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT : -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Within a stream, a signal that sets *stop shuts our sending side down
 * (once): the daemon ends the stream, and its final reply is still read. */
struct reader {
	int fd;
	volatile sig_atomic_t *stop;
	bool stopped;
};

static void reader_check_stop(struct reader *rd)
{
	if (rd->stop && *rd->stop && !rd->stopped) {
		shutdown(rd->fd, SHUT_WR);
		rd->stopped = true;
	}
}

static int read_all_rd(struct reader *rd, void *buf, size_t len)
{
	uint8_t *p = buf;
	while (len) {
		reader_check_stop(rd);
		ssize_t n = read(rd->fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT : -errno;
		if (n == 0)
			return -ECONNRESET; /* daemon closed before a full reply */
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Connect and send the request.  Returns the fd, or a negative errno.
 * *sent is the send's result: a daemon that turns us away may have
 * answered and closed already, and the reply waiting says why. */
static int connect_send(const char *path, const uint8_t *req, size_t len, int *sent)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	strcpy(sun.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* A daemon that is wedged must not hang scripts forever. */
	struct timeval timeout = { .tv_sec = CTL_CALL_TIMEOUT_S };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		int ret = -errno;
		close(fd);
		return ret;
	}
	*sent = write_all(fd, req, len);
	if (*sent && *sent != -EPIPE && *sent != -ECONNRESET) {
		int ret = *sent;
		close(fd);
		return ret;
	}
	return fd;
}

/* Read one reply body of hdr->size bytes into a malloc'ed NUL-terminated
 * buffer. */
static int read_body(struct reader *rd, const struct ctl_reply_hdr *hdr, char **out)
{
	char *body = malloc((size_t)hdr->size + 1);
	if (!body)
		return -ENOMEM;
	int ret = read_all_rd(rd, body, hdr->size);
	if (ret) {
		free(body);
		return ret;
	}
	body[hdr->size] = '\0';
	*out = body;
	return 0;
}

/* Replies until one without CTL_REPLY_STREAM; chunks go to sc (none are
 * allowed without sc). */
static int read_replies(struct reader *rd, int sent, const struct ctl_stream_client *sc,
			int *status, char **text)
{
	bool passing = true, streaming = false;
	for (;;) {
		struct ctl_reply_hdr hdr;
		int ret = read_all_rd(rd, &hdr, sizeof(hdr));
		if (ret)
			return sent && !streaming ? sent : ret;
		ret = ctl_proto_check_reply_hdr(&hdr);
		if (ret)
			return ret;
		char *body;
		ret = read_body(rd, &hdr, &body);
		if (ret)
			return ret;
		if (!(hdr.flags & CTL_REPLY_STREAM)) {
			*status = (int)hdr.status;
			*text = body;
			return 0;
		}
		if (!sc) {
			free(body);
			return -EPROTO;
		}
		if (!streaming) {
			/* A stream is as quiet as the traffic it carries. */
			struct timeval forever = { 0 };
			setsockopt(rd->fd, SOL_SOCKET, SO_RCVTIMEO, &forever, sizeof(forever));
			streaming = true;
		}
		if (passing && sc->chunk(sc->ctx, (const uint8_t *)body, hdr.size) < 0) {
			passing = false;
			shutdown(rd->fd, SHUT_WR);
			rd->stopped = true;
		}
		free(body);
	}
}

static int call_encoded(const char *path, const uint8_t *req, size_t len,
			const struct ctl_stream_client *sc, int reply_timeout_s, int *status, char **text)
{
	int sent = 0;
	*text = NULL;
	int fd = connect_send(path, req, len, &sent);
	if (fd < 0)
		return fd;
	if (reply_timeout_s != CTL_CALL_TIMEOUT_S) {
		struct timeval timeout = { .tv_sec = reply_timeout_s };
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
	}
	struct reader rd = { .fd = fd, .stop = sc ? sc->stop : NULL };
	int ret = read_replies(&rd, sent, sc, status, text);
	close(fd);
	return ret;
}

static int call(const char *path, int argc, const char *const *argv, bool json,
		const struct ctl_stream_client *sc, int *status, char **text)
{
	uint8_t req[sizeof(struct ctl_req_hdr) + CTL_REQ_MAX_BODY];
	int len = ctl_proto_encode_request(argc, argv, json, req, sizeof(req));
	if (len < 0)
		return len;
	if (sc) { /* chunks are welcome: say so */
		struct ctl_req_hdr hdr;
		memcpy(&hdr, req, sizeof(hdr));
		hdr.flags |= CTL_REQ_STREAM_OK;
		memcpy(req, &hdr, sizeof(hdr));
	}
	return call_encoded(path, req, (size_t)len, sc, CTL_CALL_TIMEOUT_S, status, text);
}

int ctl_proto_call_batch(const char *path, const char *name, const char *text, size_t len,
			 bool json, int *status, char **out)
{
	if (len > CTL_REQ_MAX_BATCH)
		return -E2BIG;
	size_t size = sizeof(struct ctl_req_hdr) + strlen(name) + 1 + len;
	uint8_t *req = malloc(size);
	if (!req)
		return -ENOMEM;
	int n = ctl_proto_encode_batch(name, text, len, json, req, size);
	int ret = n < 0 ? n : call_encoded(path, req, (size_t)n, NULL, CTL_BATCH_TIMEOUT_S, status, out);
	free(req);
	return ret;
}

int ctl_proto_call(const char *path, int argc, const char *const *argv, bool json,
		   int *status, char **text)
{
	return call(path, argc, argv, json, NULL, status, text);
}

int ctl_proto_call_stream(const char *path, int argc, const char *const *argv, bool json,
			  const struct ctl_stream_client *sc, int *status, char **text)
{
	return call(path, argc, argv, json, sc, status, text);
}

/* ctl_server internals shared by ctl_server.c (clients, requests,
 * deadlines) and ctl_server_stream.c (streamed replies).  Not an API: only
 * those two include it.  See ctl_server.h for the contract. */
#ifndef VX_CTL_CTL_SERVER_INTERNAL_H
#define VX_CTL_CTL_SERVER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/un.h>

#include "ctl/ctl_config.h"
#include "ctl/ctl_proto.h"
#include "ctl/ctl_server.h"

/* A streamed reply in progress (ctl_server.h, "Streamed replies"). */
struct ctl_stream {
	struct ctl_server *server;
	struct ctl_client *client;
	ctl_stream_event_fn *fn;
	void *arg;
	bool ended;                 /* final reply queued; the owner let go */
	bool stop_told;             /* CTL_STREAM_STOP delivered */
	bool peer_eof;              /* the client shut its sending side */
	bool want_room;             /* the owner has more: CTL_STREAM_ROOM */
	int err;                    /* a send failed (negative errno) */
	uint32_t events;            /* epoll interest now */
};

struct ctl_client {
	int fd;
	bool dead;                  /* closed; freed at the end of the batch */
	bool writing;               /* epoll interest is EPOLLOUT */
	bool served;                /* at least one request was answered */
	uint64_t since;             /* ns: start of the current state */
	size_t in_len;
	uint8_t *in;                /* in_small, or a batch request's own
	                             * buffer (ctl_server_batch.c) */
	size_t in_cap;
	uint8_t in_small[sizeof(struct ctl_req_hdr) + CTL_REQ_MAX_BODY];
	uint8_t *out;               /* reply being sent (a stream's chunks) */
	size_t out_len, out_off, out_cap;
	struct ctl_stream *stream;  /* non-NULL while streaming */
};

struct ctl_server {
	int epfd;
	int listen_fd;
	int spare_fd;               /* /dev/null, given up to shed a
	                             * connection when out of fds */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int timer_fd;               /* timerfd: the earliest deadline */
	unsigned int max_clients;
	size_t max_reply;
	uint64_t request_ns, idle_ns, reply_ns, evict_ns;
	ctl_server_clock_fn *clock;
	uint64_t now;               /* the clock, read once per handle */
	struct ctl_client **clients; /* n_slots slots, NULL = free */
	unsigned int n_slots;       /* 2 * max_clients */
	unsigned int n_clients;     /* live ones */
	struct ctl_client *serving; /* the client whose request is dispatched */
	bool serving_stream_ok;     /* and its request takes a stream */
	struct ctl_server_stats stats;
};

/* ctl_server.c */
/* Send what the socket takes: 1 when all is sent (out freed), 0 if the
 * socket is full, negative errno on a broken client. */
int ctl_client_flush(struct ctl_client *c);

/* ctl_server_batch.c */
/* After bytes came in: a batch request larger than in_small gets a buffer
 * of its own size.  0, or a negative errno to drop the client. */
int ctl_client_fit_request(struct ctl_client *c);
/* After a request was served and its bytes removed: back to in_small
 * when what is left fits. */
void ctl_client_shrink(struct ctl_client *c);
/* Frees a batch buffer (client going away). */
void ctl_client_release_in(struct ctl_client *c);
/* The command of a batch request: its text parsed into *cfg (the caller
 * releases it) and *cmd a CTL_BATCH over it.  0, or -EINVAL with err
 * filled ("FILE:LINE: ..."). */
int ctl_batch_parse(const struct ctl_request *req, struct ctl_config *cfg, struct ctl_cmd *cmd,
		    struct ctl_err *err);

/* ctl_server_stream.c */
/* An event on a streaming client's fd.  Returns 0, or a negative errno to
 * drop the client (-ESHUTDOWN: it closed cleanly after its stream). */
int ctl_stream_client_event(struct ctl_server *s, struct ctl_client *c, uint32_t events);
/* The client is closing: tell the owner (CTL_STREAM_GONE) unless the stream
 * had ended, and free the stream. */
void ctl_stream_client_gone(struct ctl_client *c);
/* Arm the epoll interest of a streaming client; 0 or -errno. */
int ctl_stream_arm(struct ctl_server *s, struct ctl_client *c);

#endif

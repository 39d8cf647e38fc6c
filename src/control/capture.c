/* The control thread's side of capture (capture.h): `capture` starts a
 * session (filter compiled, ring made, started on the datapath that serves
 * the port, the reply turned into a stream), the control loop drains each
 * session's ring into its stream, and a session ends on the client's stop,
 * its hang-up, -c COUNT, its port's removal or the daemon's exit, with a
 * summary line.
 *
 * Which datapath: a port whose I/O the control thread opened (a tap, a
 * vxlan port's socket) is the userspace datapath's; a port a datapath
 * serves itself (devports.c) is that datapath's.  Both through dpif's
 * capture_start/stop: this file names neither. */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl/ctl_capture.h"
#include "ctl/ctl_server.h"
#include "dp/capture.h"
#include "dp/dpif.h"
#include "control/vxd_internal.h"
#include "port/vxlan.h"
#include "util/vlog.h"

struct vxd_cap_session {
	struct vxd *vxd;
	unsigned slot;
	struct vxd_capture cap;      /* shared with the worker while attached */
	bool attached;
	struct ctl_stream *st;       /* NULL once the client is gone */
	char port[CTL_NAME_SIZE];
	uint32_t count;              /* -c; 0: until stopped */
	uint64_t delivered;          /* records sent to the client */
	struct bpf_program prog;
	bool has_prog;
	uint8_t *chunk;              /* records on their way into one chunk */
	size_t chunk_len;
	struct dpif *dp;             /* the datapath that serves the port */
};

/* ---- filter ---------------------------------------------------------------- */

/* pcap_compile over Ethernet frames; pcap's own message on refusal. */
static int cap_compile(struct vxd_cap_session *s, const char *filter, struct ctl_err *err)
{
	if (!filter[0])
		return 0;
	pcap_t *p = pcap_open_dead(DLT_EN10MB, CTL_CAPTURE_SNAPLEN);
	if (!p)
		return vxd_refuse(err, -ENOMEM, "capture: out of memory");
	int ret = 0;
	if (pcap_compile(p, &s->prog, filter, 1, PCAP_NETMASK_UNKNOWN) < 0)
		ret = vxd_refuse(err, -EINVAL, "capture: bad FILTER \"%s\": %s", filter, pcap_geterr(p));
	else
		s->has_prog = true;
	pcap_close(p);
	if (s->has_prog) {
		s->cap.insns = s->prog.bf_insns;
		s->cap.n_insns = s->prog.bf_len;
	}
	return ret;
}

/* ---- session life -------------------------------------------------------- */

static void cap_free(struct vxd_cap_session *s)
{
	if (s->has_prog)
		pcap_freecode(&s->prog);
	rec_ring_fini(&s->cap.ring);
	free(s->chunk);
	free(s);
}

/* The session on its datapath: started (0, or the datapath's refusal in
 * err) or stopped. */
static int cap_datapath(struct vxd_cap_session *s, bool start, struct ctl_err *err)
{
	struct dpif *dp = s->dp;
	if (!start) {
		dp->class->capture_stop(dp, &s->cap);
		return 0;
	}
	char why[sizeof(err->msg)] = "";
	int ret = dp->class->capture_start(dp, &s->cap, why, sizeof(why));
	if (ret < 0)
		return why[0] ? vxd_refuse(err, ret, "%s", why)
			      : vxd_refuse(err, ret, "capture: port %s: %s", s->port, strerror(-ret));
	return 0;
}

/* The outer headers of what a vxlan port sends, as its socket makes them. */
static void cap_tx_encap(struct vxd_capture *cap, const struct port *port)
{
	const struct vxlan_options *o = vxlan_port_options(port);
	struct vxlan_encap *e = &cap->tx_encap;
	static const uint8_t here[6] = { 0x02, 0, 0, 0, 0, 0x01 }, there[6] = { 0x02, 0, 0, 0, 0, 0x02 };
	e->vni = port->vni;
	e->family = o->local.family;
	memcpy(e->src_ip, o->local.bytes, 16);
	e->dst_port = o->dst_port ? o->dst_port : VXLAN_DEFAULT_PORT;
	e->src_port_min = o->src_port_max ? o->src_port_min : e->dst_port;
	e->src_port_max = o->src_port_max ? o->src_port_max : e->dst_port;
	e->udp_zero_csum = o->udp_zero_csum && e->family == 4;
	e->no_df = o->df == VXLAN_DF_UNSET;
	memcpy(e->src_mac, here, 6);
	memcpy(e->dst_mac, there, 6);
}

static void cap_drain(struct vxd_cap_session *s);

/* Ends a session: the worker lets go, what its ring still holds goes out
 * as far as the stream takes it, then the summary. */
static void cap_end(struct vxd_cap_session *s, enum ctl_status status, const char *why)
{
	if (s->attached) {
		cap_datapath(s, false, NULL);
		s->attached = false;
	}
	cap_drain(s);
	uint64_t left = 0;
	size_t len;
	while (rec_ring_peek(&s->cap.ring, &len)) {
		left++;
		rec_ring_release(&s->cap.ring);
	}
	bool counted_out = s->count && s->delivered >= s->count;
	uint64_t dropped = atomic_load(&s->cap.dropped) + (counted_out ? 0 : left);
	char text[256];
	int n = snprintf(text, sizeof(text), "capture %s: %" PRIu64 " frames captured", s->port, s->delivered);
	if (dropped)
		n += snprintf(text + n, sizeof(text) - (size_t)n, "; %" PRIu64 " frames dropped: reader too slow",
			      dropped);
	uint64_t prefiltered = atomic_load(&s->cap.prefiltered);
	if (prefiltered)
		n += snprintf(text + n, sizeof(text) - (size_t)n, "; the filter skipped %" PRIu64 " in the kernel",
			      prefiltered);
	snprintf(text + n, sizeof(text) - (size_t)n, "%s%s\n", why[0] ? "; " : "", why);
	VLOG_INFO("capture", "%s", text);
	s->vxd->captures[s->slot] = NULL;
	if (s->st)
		ctl_stream_end(s->st, status, text);
	cap_free(s);
}

static void cap_on_stream(void *arg, struct ctl_stream *st, enum ctl_stream_event ev)
{
	struct vxd_cap_session *s = arg;
	(void)st;
	if (ev == CTL_STREAM_GONE)
		s->st = NULL; /* nobody to tell: just stop */
	cap_end(s, CTL_STATUS_OK, ev == CTL_STREAM_GONE ? "client gone" : "");
}

/* What a session is, whichever datapath serves its port. */
static int cap_setup(struct vxd *vxd, struct vxd_cap_session *s, struct dpif *dp, uint16_t port_id,
		     const struct ctl_capture *c, struct ctl_err *err)
{
	s->vxd = vxd;
	s->dp = dp;
	snprintf(s->port, sizeof(s->port), "%s", c->port);
	s->count = c->count;
	s->cap.port_id = port_id;
	s->cap.dirs = c->dirs;
	s->cap.outer = c->outer;
	s->cap.want_wake = &vxd->capture_want_wake;
	s->cap.wake_fd = vxd->wake_fd;
	int ret = cap_compile(s, c->filter, err);
	if (ret < 0)
		return ret;
	s->chunk = malloc(CTL_STREAM_MAX_CHUNK);
	if (!s->chunk || rec_ring_init(&s->cap.ring, VXD_CAPTURE_RING) < 0)
		return vxd_refuse(err, -ENOMEM, "capture: out of memory");
	return 0;
}

/* A port whose I/O the control thread opened (the userspace datapath's). */
static int cap_setup_port(struct vxd *vxd, struct vxd_cap_session *s, const struct port *port,
			  const struct ctl_capture *c, struct ctl_err *err)
{
	if (c->outer && !port_is_vxlan(port))
		return vxd_refuse(err, -EINVAL, "port %s: a tap port has no outer headers (outer is for vxlan ports)",
				  c->port);
	s->cap.vxlan = port_is_vxlan(port);
	if (s->cap.vxlan)
		cap_tx_encap(&s->cap, port);
	return cap_setup(vxd, s, vxd->dp, port->id, c, err);
}

/* A port a datapath serves itself (devports.c): what its datapath can
 * capture of it, its capture_start says. */
static int cap_setup_devport(struct vxd *vxd, struct vxd_cap_session *s, const struct vxd_dp_port *dev,
			     const struct ctl_capture *c, struct ctl_err *err)
{
	s->cap.vxlan = dev->vxlan;
	return cap_setup(vxd, s, dev->dp, dev->id, c, err);
}

int vxd_capture_start(struct vxd *vxd, const struct ctl_capture *c, struct ctl_err *err)
{
	struct port *port = vxd_port_by_name(vxd, c->port);
	struct vxd_dp_port dev;
	if (!port && !vxd_devport_find(vxd, c->port, &dev))
		return vxd_refuse(err, -ENOENT, "port %s: no such port", c->port);
	unsigned slot = 0;
	while (slot < VXD_CAPTURE_MAX && vxd->captures[slot])
		slot++;
	if (slot == VXD_CAPTURE_MAX)
		return vxd_refuse(err, -EBUSY, "capture: %d captures run already, the most at once", VXD_CAPTURE_MAX);
	if (!vxd->ctl)
		return vxd_refuse(err, -EOPNOTSUPP, "capture: only over the control socket");
	struct vxd_cap_session *s = calloc(1, sizeof(*s));
	if (!s)
		return vxd_refuse(err, -ENOMEM, "capture: out of memory");
	s->slot = slot;
	int ret = port ? cap_setup_port(vxd, s, port, c, err) : cap_setup_devport(vxd, s, &dev, c, err);
	if (ret < 0 || (ret = cap_datapath(s, true, err)) < 0)
		goto err_free;
	s->attached = true;
	s->st = ctl_server_stream_begin(vxd->ctl, cap_on_stream, s);
	if (!s->st) {
		ret = vxd_refuse(err, -errno, "capture: %s", strerror(errno));
		cap_datapath(s, false, NULL);
		goto err_free;
	}
	vxd->captures[slot] = s;
	VLOG_INFO("capture", "capture %s started%s%s", c->port, c->filter[0] ? ": " : "", c->filter);
	return 0;

err_free:
	cap_free(s);
	return ret;
}

/* ---- draining ------------------------------------------------------------------ */

static void cap_flush(struct vxd_cap_session *s)
{
	if (s->chunk_len && s->st)
		ctl_stream_send(s->st, s->chunk, s->chunk_len); /* a broken client is GONE next */
	s->chunk_len = 0;
}

/* Moves records from the ring into chunks while the stream has room. */
static void cap_drain(struct vxd_cap_session *s)
{
	if (!s->st)
		return;
	size_t room = ctl_stream_room(s->st);
	while (!s->count || s->delivered < s->count) {
		size_t len;
		const void *rec = rec_ring_peek(&s->cap.ring, &len);
		if (!rec)
			break;
		size_t need = (len + 7) & ~(size_t)7;
		if (s->chunk_len + need > CTL_STREAM_MAX_CHUNK) {
			cap_flush(s);
			room = s->st ? ctl_stream_room(s->st) : 0;
		}
		if (s->chunk_len + need + sizeof(struct ctl_reply_hdr) > room)
			break; /* the reader is behind: the ring holds the rest */
		memcpy(s->chunk + s->chunk_len, rec, len);
		memset(s->chunk + s->chunk_len + len, 0, need - len);
		s->chunk_len += need;
		rec_ring_release(&s->cap.ring);
		s->delivered++;
	}
	cap_flush(s);
}

void vxd_capture_drain(struct vxd *vxd)
{
	bool room = false, waiting = false;
	for (unsigned i = 0; i < VXD_CAPTURE_MAX; i++) {
		struct vxd_cap_session *s = vxd->captures[i];
		if (!s)
			continue;
		cap_drain(s);
		if (s->count && s->delivered >= s->count) {
			cap_end(s, CTL_STATUS_OK, "");
			continue;
		}
		if (s->st && ctl_stream_room(s->st) > CTL_CAPTURE_SNAPLEN) {
			room = true;
			waiting |= rec_ring_used(&s->cap.ring) > 0;
		}
	}
	/* Ask the worker for a wake-up only with room to send: a slow reader's
	 * full ring must not wake us per batch (its socket's EPOLLOUT does). */
	if (!room)
		return;
	atomic_store(&vxd->capture_want_wake, true);
	if (waiting) { /* arrived meanwhile: go round again */
		uint64_t one = 1;
		if (write(vxd->wake_fd, &one, sizeof(one)) < 0) {
			/* already signalled */
		}
	}
}

void vxd_capture_port_removed(struct vxd *vxd, const struct dpif *dp, uint16_t port_id)
{
	for (unsigned i = 0; i < VXD_CAPTURE_MAX; i++) {
		struct vxd_cap_session *s = vxd->captures[i];
		if (s && s->dp == dp && s->cap.port_id == port_id)
			cap_end(s, CTL_STATUS_REFUSED, "port removed");
	}
}

void vxd_capture_end_all(struct vxd *vxd, const char *why)
{
	for (unsigned i = 0; i < VXD_CAPTURE_MAX; i++)
		if (vxd->captures[i])
			cap_end(vxd->captures[i], CTL_STATUS_OK, why);
}

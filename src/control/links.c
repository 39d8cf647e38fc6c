/* Following the ports' devices with netlink link events (control thread).
 *
 * What each port's device is:
 *   - a tap: the tap itself, in the port's namespace;
 *   - an afpacket port: its link (dev), in the port's namespace;
 *   - a vxlan port: the underlay link that holds its local address, in the
 *     daemon's namespace (found once, when the port is added).
 * One watch per namespace (rtnl_link_watch_open) serves every port there;
 * it is closed when its last port goes, since an open watch keeps a
 * namespace alive.
 *
 * What an event does:
 *   - RTM_NEWLINK of a name whose tap or afpacket port is lost (its device went away,
 *     datapath.c): the port reattaches at once (vxd_reattach_port).  The
 *     device may still be held by whoever made it (`ip tuntap add` holds
 *     it while it sets it up, and a device that is down sends no event
 *     when that ends): then the control loop retries every
 *     VXD_REATTACH_RETRY_MS for a few seconds.  The once-a-second check
 *     stays as the safety net for lost messages;
 *   - a device that goes down (not IFF_UP, or no carrier: not
 *     IFF_LOWER_UP) or away marks its port down, with since when, and
 *     counts it; up again clears it.  A tap that is down is published in
 *     the view (link_down): the worker drops what goes to it as
 *     port_link_down instead of a write the kernel would refuse with EIO.
 *     A vxlan port whose underlay is down is only marked: its sends fail
 *     on their own (counted as tx errors), and the route may well have
 *     another way out;
 *   - ENOBUFS (messages lost): every port of that namespace is read again. */
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "control/vxd_internal.h"
#include "port/ethtool.h"
#include "port/frame.h"
#include "port/afpacket.h"
#include "port/rtnl.h"
#include "port/vxlan.h"
#include "util/vlog.h"

#ifndef IFF_LOWER_UP
#define IFF_LOWER_UP 0x10000 /* linux/if.h: carrier on (net/if.h lacks it) */
#endif

static const char *vxd_link_netns(const struct vxd *vxd, uint16_t id)
{
	return port_is_frame(vxd->ports[id]) ? vxd->port_cfg[id].netns : "";
}

static int vxd_watch_find(const struct vxd *vxd, const char *netns)
{
	for (int w = 0; w < VXD_MAX_WATCHES; w++)
		if (vxd->watches[w].fd >= 0 && strcmp(vxd->watches[w].netns, netns) == 0)
			return w;
	return -1;
}

static int vxd_watch_open(struct vxd *vxd, const char *netns)
{
	int w = vxd_watch_find(vxd, netns);
	if (w >= 0)
		return w;
	for (w = 0; w < VXD_MAX_WATCHES && vxd->watches[w].fd >= 0; w++)
		;
	if (w == VXD_MAX_WATCHES)
		return -ENOSPC;
	int ns = netns[0] ? rtnl_netns_open(netns) : -1;
	if (netns[0] && ns < 0)
		return ns;
	int fd = rtnl_link_watch_open(ns);
	if (ns >= 0)
		close(ns);
	if (fd < 0)
		return fd;
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = VXD_LINK_SRC + (uint32_t)w };
	if (epoll_ctl(vxd->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	vxd->watches[w].fd = fd;
	snprintf(vxd->watches[w].netns, sizeof(vxd->watches[w].netns), "%s", netns);
	return w;
}

static void vxd_watch_release(struct vxd *vxd, int w)
{
	if (vxd->watches[w].fd < 0)
		return;
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++)
		if (vxd->ports[i] && vxd->links[i].watch == w)
			return;
	epoll_ctl(vxd->epfd, EPOLL_CTL_DEL, vxd->watches[w].fd, NULL);
	close(vxd->watches[w].fd);
	vxd->watches[w].fd = -1;
}

/* Up or down, from what netlink says of the device (present: false when
 * it is gone).  Publishes the view when a tap's state changed. */
static void vxd_link_set(struct vxd *vxd, uint16_t id, bool present, uint32_t flags)
{
	struct vxd_link_state *ls = &vxd->links[id];
	bool up = present && (flags & IFF_UP) && (flags & IFF_LOWER_UP);
	bool was_up = ls->down_ns == 0;
	if (up == was_up)
		return;
	const struct port *port = vxd->ports[id];
	if (up) {
		ls->down_ns = 0;
		VLOG_INFO("port", "%s: %s%s is up again", port->name, port_is_vxlan(port) ? "underlay " : "link ",
			  ls->dev);
	} else {
		ls->down_ns = vxd_now_ns();
		ls->down_events++;
		VLOG_WARN("port", "%s: %s%s is %s", port->name, port_is_vxlan(port) ? "underlay " : "link ", ls->dev,
			  !present ? "gone" : !(flags & IFF_UP) ? "down (not IFF_UP)" : "down (no carrier)");
	}
	if (port_is_frame(port) && vxd_publish(vxd, NULL) < 0)
		VLOG_ERR("port", "%s: cannot publish its link state (out of memory)", port->name);
}

/* Reads the device's state now (at add, and after lost messages). */
static void vxd_link_refresh(struct vxd *vxd, uint16_t id)
{
	struct vxd_link_state *ls = &vxd->links[id];
	const char *netns = vxd_link_netns(vxd, id);
	if (port_is_vxlan(vxd->ports[id]) && !ls->ifindex)
		return;
	struct rtnl_link_info li;
	int err = rtnl_link_get_in(netns, ls->ifindex ? NULL : ls->dev, ls->ifindex, &li);
	if (err == 0 || err == -ENODEV)
		vxd_link_set(vxd, id, err == 0, err == 0 ? li.flags : 0);
}

void vxd_links_port_added(struct vxd *vxd, uint16_t id)
{
	struct vxd_link_state *ls = &vxd->links[id];
	const struct port *port = vxd->ports[id];
	*ls = (struct vxd_link_state){ .watch = -1 };
	if (port_is_afpacket(port)) {
		snprintf(ls->dev, sizeof(ls->dev), "%s", port_frame_dev(port));
	} else if (port_is_tap(port)) {
		snprintf(ls->dev, sizeof(ls->dev), "%s", port->name);
	} else {
		const struct ctl_ip *local = &vxd->port_cfg[id].local;
		int ifindex = rtnl_addr_ifindex(local->family == AF_INET6 ? 6 : 4, local->bytes);
		struct rtnl_link_info li;
		if (ifindex <= 0 || rtnl_link_get(-1, NULL, ifindex, &li) < 0) {
			VLOG_INFO("port", "%s: its local address is on no link here: its underlay state is not followed",
				  port->name);
			return;
		}
		ls->ifindex = ifindex;
		snprintf(ls->dev, sizeof(ls->dev), "%s", li.name);
		ls->csum_unfinished = ethtool_leaves_csum_unfinished(ls->dev);
	}
	int w = vxd_watch_open(vxd, vxd_link_netns(vxd, id));
	if (w < 0) {
		VLOG_WARN("port", "%s: cannot watch its link (%s): its state is not followed", port->name, strerror(-w));
		return;
	}
	ls->watch = w;
	vxd_link_refresh(vxd, id);
}

void vxd_links_port_removed(struct vxd *vxd, uint16_t id)
{
	int w = vxd->links[id].watch;
	vxd->links[id] = (struct vxd_link_state){ .watch = -1 };
	if (w >= 0)
		vxd_watch_release(vxd, w);
}

struct vxd_link_ctx {
	struct vxd *vxd;
	int watch;
	uint16_t reattach[VXD_MAX_PORTS];
	unsigned n_reattach;
	uint16_t lost[VXD_MAX_PORTS];
	unsigned n_lost;
};

static void vxd_link_event(void *aux, const struct rtnl_link_event *ev)
{
	struct vxd_link_ctx *c = aux;
	struct vxd *vxd = c->vxd;
	for (uint16_t i = 1; i < VXD_MAX_PORTS; i++) {
		const struct vxd_link_state *ls = &vxd->links[i];
		if (!vxd->ports[i] || ls->watch != c->watch)
			continue;
		bool match = ls->ifindex ? ev->link.ifindex == ls->ifindex : strcmp(ev->link.name, ls->dev) == 0;
		if (!match)
			continue;
		/* A lost port's device is back: reattach it once this batch of
		 * events is read (ids move).  A tap with carrier is still held
		 * by whoever made it: wait (see above). */
		if (port_is_frame(vxd->ports[i]) && !ev->deleted &&
		    (port_is_afpacket(vxd->ports[i]) || !(ev->link.flags & IFF_LOWER_UP)) && c->n_reattach < VXD_MAX_PORTS)
			c->reattach[c->n_reattach++] = i;
		if (port_is_afpacket(vxd->ports[i]) && ev->deleted && c->n_lost < VXD_MAX_PORTS)
			c->lost[c->n_lost++] = i;
		else if (port_is_afpacket(vxd->ports[i]) && !ev->deleted)
			afpacket_port_refresh_link(vxd->ports[i]); /* its offloads may have changed */
		vxd_link_set(vxd, i, !ev->deleted, ev->link.flags);
	}
}

void vxd_links_input(struct vxd *vxd, unsigned w)
{
	if (w >= VXD_MAX_WATCHES || vxd->watches[w].fd < 0)
		return;
	struct vxd_link_ctx c = { .vxd = vxd, .watch = (int)w };
	int n = rtnl_link_watch_read(vxd->watches[w].fd, vxd_link_event, &c);
	if (n == -ENOBUFS) {
		VLOG_WARN("port", "link events in namespace '%s' were lost: reading its links again",
			  vxd->watches[w].netns);
		for (uint16_t i = 1; i < VXD_MAX_PORTS; i++)
			if (vxd->ports[i] && vxd->links[i].watch == (int)w)
				vxd_link_refresh(vxd, i);
		vxd_reattach_lost(vxd, "periodic check");
		return;
	}
	/* An afpacket socket whose link goes does not always say so (see
	 * port/afpacket.h): the worker checks it and marks the port lost. */
	for (unsigned k = 0; k < c.n_lost; k++) {
		for (unsigned i = 0; i < vxd->n_workers; i++) {
			struct vxd_req req = { .kind = VXD_REQ_PORT_LOST, .port_id = c.lost[k] };
			vxd_worker_call(vxd->workers[i], &req);
		}
	}
	for (unsigned k = 0; k < c.n_reattach; k++)
		if (vxd_reattach_port(vxd, c.reattach[k], "link event") < 0)
			vxd->reattach_retry_until_ns = vxd_now_ns() + VXD_REATTACH_RETRY_FOR_MS * 1000000ull;
}

void vxd_links_close(struct vxd *vxd)
{
	for (int w = 0; w < VXD_MAX_WATCHES; w++) {
		if (vxd->watches[w].fd < 0)
			continue;
		if (vxd->epfd >= 0)
			epoll_ctl(vxd->epfd, EPOLL_CTL_DEL, vxd->watches[w].fd, NULL);
		close(vxd->watches[w].fd);
		vxd->watches[w].fd = -1;
	}
}

const char *vxd_link_down_why(const struct vxd *vxd, uint16_t id, char *buf, size_t size)
{
	const struct vxd_link_state *ls = &vxd->links[id];
	if (!vxd->ports[id] || !ls->down_ns)
		return NULL;
	if (port_is_vxlan(vxd->ports[id]))
		snprintf(buf, size, "underlay %s down", ls->dev);
	else
		snprintf(buf, size, "link down");
	return buf;
}

/* Minimal rtnetlink client for what ports need: move a link into another
 * network namespace, set its MTU, MAC and alias, bring it up, read its
 * MTU, MAC, alias and the kernel's drop counters.  Used at port creation only
 * (control path), never per packet.
 *
 * Namespaces are named as ip-netns(8) names them (/run/netns/NAME).  A
 * netlink socket lives in the namespace it was created in, so to act inside
 * another namespace we switch the thread there just long enough to create
 * the socket.  That switch is why these must run on the control path of a
 * single-threaded daemon or in a thread of its own. */
#ifndef VX_PORT_RTNL_H
#define VX_PORT_RTNL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Opens /run/netns/NAME; returns an fd or a negative errno. */
int rtnl_netns_open(const char *name);

/* Moves link `ifname` (in the caller's namespace) into the namespace `netns_fd`. */
int rtnl_link_set_netns(const char *ifname, int netns_fd);

/* In namespace `netns_fd` (-1: the caller's), sets the MTU of `ifname`
 * (mtu 0: leave it) and, if `up`, sets IFF_UP. */
int rtnl_link_configure(int netns_fd, const char *ifname, uint32_t mtu, bool up);

/* Deletes link `ifname` in namespace `netns_fd` (-1: the caller's). */
int rtnl_link_delete(int netns_fd, const char *ifname);

/* What RTM_GETLINK says of one link. */
struct rtnl_link_info {
	int ifindex;
	char name[16];          /* IFLA_IFNAME */
	uint32_t flags;         /* ifi_flags: IFF_UP, IFF_LOWER_UP, ... */
	uint32_t mtu;
	uint8_t mac[6];
	char alias[64];         /* IFLA_IFALIAS, "" when none */
	int master;             /* IFLA_MASTER (a bridge port's bridge), 0 when none */
	bool has_stats;         /* IFLA_STATS64 was present */
	uint64_t rx_dropped;    /* frames the device dropped on their way in */
	uint64_t tx_dropped;    /* ... on their way out (a tap: the VM sent them, nobody read them) */
};

/* In namespace `netns_fd` (-1: the caller's), the link with index
 * `ifindex`, or named `ifname` when ifindex is 0. */
int rtnl_link_get(int netns_fd, const char *ifname, int ifindex, struct rtnl_link_info *out);

/* rtnl_link_get() in the namespace named `netns` (NULL or "": the
 * caller's): opens it, asks, closes it. */
int rtnl_link_get_in(const char *netns, const char *ifname, int ifindex, struct rtnl_link_info *out);

/* In namespace `netns_fd`, sets the MAC of `ifname` (mac non-NULL) and its
 * IFLA_IFALIAS (alias non-NULL). */
int rtnl_link_set_mac_alias(int netns_fd, const char *ifname, const uint8_t *mac, const char *alias);

/* Moves the calling thread into namespace `netns_fd` (< 0: stays; *home
 * is then -1) and returns, in *home, an fd to come back with.  Only for a
 * moment, on the control thread: sockets and tun fds opened meanwhile stay
 * in that namespace for good. */
int rtnl_netns_enter(int netns_fd, int *home);

/* Back to `home` (from rtnl_netns_enter; -1: nothing to do) and closes it.
 * Failing that the process exits: it would run in the wrong namespace. */
void rtnl_netns_leave(int home);

/* The index of the link that holds address `addr` (family 4 or 6: 4 or 16
 * bytes) in the caller's namespace, or -ENOENT. */
int rtnl_addr_ifindex(int family, const uint8_t *addr);

/* ---- link events ----------------------------------------------------------
 *
 * A watch is a non-blocking NETLINK_ROUTE socket subscribed to RTMGRP_LINK
 * in one namespace: the kernel sends RTM_NEWLINK on every change of a link
 * (created, flags, carrier, MTU, name) and RTM_DELLINK when one goes.  A
 * watch keeps its namespace alive while it is open, so close it once no
 * port needs that namespace.  When the socket's buffer overflows the kernel
 * drops messages and says so once (ENOBUFS): the reader must then read the
 * state of every link it cares about again. */

/* Opens a watch in `netns_fd` (-1: the caller's); returns the fd. */
int rtnl_link_watch_open(int netns_fd);

struct rtnl_link_event {
	bool deleted;               /* RTM_DELLINK */
	struct rtnl_link_info link; /* ifindex, name, flags (and mtu, mac) */
};

typedef void rtnl_link_event_fn(void *aux, const struct rtnl_link_event *ev);

/* Parses the messages of one datagram from a watch (pure: no I/O), calling
 * `fn` for each RTM_NEWLINK / RTM_DELLINK; anything else, and anything
 * truncated, is skipped.  Returns the number of events. */
int rtnl_link_events_parse(const void *buf, size_t len, rtnl_link_event_fn *fn, void *aux);

/* Reads what is pending on a watch and parses it.  Returns the number of
 * events, or -ENOBUFS when messages were lost (resynchronise), or another
 * negative errno. */
int rtnl_link_watch_read(int fd, rtnl_link_event_fn *fn, void *aux);

#endif

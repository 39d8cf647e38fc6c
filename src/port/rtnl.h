/* Minimal rtnetlink client for what ports need: move a link into another
 * network namespace, set its MTU, bring it up.  Used at port creation only
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

#endif

/* A `port add` line (ctl/ctl_cmd.h) in the terms of a datapath that
 * serves the port itself (dp/dpif.h, struct dpif_port_spec): pure, no
 * I/O; devports.c hands the result to the datapath's port_add.
 *
 * What maps to what: the type (afpacket -> DPIF_PORT_NETDEV, veth ->
 * DPIF_PORT_VETH, vxlan -> DPIF_PORT_VXLAN; a tap has no spec, its fd is
 * vxswitchd's, ports.c); an option not given is 0 in the spec (mtu, the
 * srcport range), so a datapath that cannot honour an option refuses
 * exactly the lines that give it; df keeps its value; `evpn` is a flag;
 * the addresses keep their family.  The spec is zeroed first, padding
 * too: a datapath may compare two specs whole. */
#ifndef VX_CONTROL_PORT_SPEC_H
#define VX_CONTROL_PORT_SPEC_H

#include "ctl/ctl_cmd.h"
#include "dp/dpif.h"

void vxd_port_spec(const struct ctl_port_add *pa, struct dpif_port_spec *s);

#endif

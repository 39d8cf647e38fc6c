/* The userspace datapath's dpif (dp/dpif.h): worker threads that read the
 * ports' fds and the underlay sockets themselves (worker.h). */
#ifndef VX_DP_USER_DPIF_USER_H
#define VX_DP_USER_DPIF_USER_H

#include "dp/dpif.h"

extern const struct dpif_class dpif_user_class;

#endif

/* vxctl capture: the client of a streamed capture (ctl/ctl_capture.h).
 * Records go to a pcap file written with libpcap (-w FILE, "-" for stdout,
 * flushed after every chunk so `-w - | tcpdump -r -` sees frames as they
 * come) or, without -w, one summary line each on stdout.  SIGINT/SIGTERM
 * (and a reader of stdout that goes away) stop the capture: the daemon
 * ends it, the file is flushed and closed, and the daemon's summary ("N
 * frames captured; M frames dropped: reader too slow") goes to stderr.
 * Returns vxctl's exit status. */
#ifndef VX_CLI_VXCTL_CAPTURE_H
#define VX_CLI_VXCTL_CAPTURE_H

#include "ctl/ctl_cmd.h"

int vxctl_capture(const char *socket_path, int argc, const char *const *argv,
		  const struct ctl_capture *cap);

#endif

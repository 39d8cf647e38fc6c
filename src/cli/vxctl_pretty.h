/* vxctl_pretty: `-j -p`, JSON indented the way iproute2 indents it.
 *
 * Why here and not in the daemon?  The daemon answers compact JSON for
 * every client; indentation is a matter of the terminal, so the client
 * does it, over the text it got, without changing a byte of any value.
 *
 * The layout is lib/json_writer.c's pretty mode (iproute2 6.1): every key
 * of an object on its own line, indented four spaces per level, `"key": `
 * with one space; values inside an array follow each other on one line
 * (`[{` ... `},{` ... `}`); a closing bracket of a non-empty container on
 * its own line at its opener's level.  Whitespace between tokens of the
 * input is dropped; strings are copied as they are (escapes kept).
 *
 * Pure: a buffer in, a malloc'ed buffer out. */
#ifndef VX_CLI_VXCTL_PRETTY_H
#define VX_CLI_VXCTL_PRETTY_H

#include <stddef.h>

/* The pretty form of the JSON text in[0..len), NUL-terminated, in a
 * malloc'ed *out.  Each top-level value ends with a newline.  Returns 0,
 * -EINVAL for text that is not well nested JSON (an unterminated string, a
 * bracket that does not match), -ENOMEM. */
int vxctl_json_pretty(const char *in, size_t len, char **out);

#endif /* VX_CLI_VXCTL_PRETTY_H */

# vxctl capture in netns tests (sourced after lib.sh by test_capture.sh and
# test_kdp_capture.sh).  The caller sets SOCK1 (the daemon's control
# socket) and D (a scratch directory, the rig's).
#
# cap_start NAME ARGS...: `vxctl capture ARGS` in the background, its
# stderr in $D/NAME.err, its pid in CAP_NAME; cap_wait NAME waits for it
# (it ends by -c or a signal) and fails the test unless it exited 0.
cap_start() {
	local name=$1; shift
	"$VXCTL" --socket "$SOCK1" capture "$@" 2>"$D/$name.err" &
	eval "CAP_$name=$!"
}
cap_wait() {
	local pid rc=0
	eval "pid=\$CAP_$1"
	wait "$pid" || rc=$?
	[ "$rc" = 0 ] || fail "capture $1 exited $rc: $(cat "$D/$1.err")"
}
# lens FILE [DISPLAY-FILTER]: frame lengths tshark reads, one per line.
lens() { tshark -r "$1" -T fields -e frame.len ${2:+-Y "$2"} 2>/dev/null; }
# expect FILE COUNT LEN [DISPLAY-FILTER]: COUNT frames, all of LEN bytes.
expect() {
	local got n bytes
	got=$(lens "$1" "${4:-}")
	n=$(printf '%s\n' "$got" | grep -c . || true)
	bytes=$(printf '%s\n' "$got" | awk '{ s += $1 } END { print s + 0 }')
	[ "$n" = "$2" ] && [ "$bytes" = $(( $2 * $3 )) ] ||
		fail "$1: $n frames of $bytes bytes, want $2 x $3 (${4:-all}): $(tshark -r "$1" 2>/dev/null | head -5)"
}
settle() { sleep 0.4; } # the capture is attached once vxctl has its reply stream

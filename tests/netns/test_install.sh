#!/bin/bash
# Install and privileges: `make install DESTDIR PREFIX` lays out every file;
# the installed unit passes `systemd-analyze verify` against the DESTDIR root
# (binary path checked there: a non-executable vxswitchd fails it); both man
# pages render without warnings and name every option of --help; a
# vxswitchd started with --user nobody forwards (ping, iperf3), runs as
# nobody in every thread with CapEff = CAP_NET_ADMIN + CAP_SYS_ADMIN (the
# worker none), and still adds and removes a tap in a namespace, adds a
# vxlan port and reloads on SIGHUP; --group makes the socket 0660 for that
# group, whose members (primary or supplementary) are served and others not;
# started as the unit starts it (never root, ambient capabilities) it works too.
#
#   vxt31-PID-vm1      vxt31-PID-h1                               vxt31-PID-h2      vxt31-PID-vm2
#   vnet1 192.0.2.1 <-- vxswitchd --user nobody   u1 ====== u2   vxswitchd --user nobody --> vnet2
#                       --group users                                           192.0.2.2
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt31-$$"
DEST=$(mktemp -d /tmp/vxt31-$$-dest.XXXX)
DEST2=$(mktemp -d /tmp/vxt31-$$-dest2.XXXX)
cleanup() { rig_cleanup; rm -rf "$DEST" "$DEST2"; }
trap cleanup EXIT
KEPT=0000000000201000            # privs.h PRIVS_KEPT_CAPS
KEPT_NAMES=cap_net_admin,cap_sys_admin

# --- make install: the layout ---------------------------------------------
make --no-print-directory -s install BUILD="$BUILD" DESTDIR="$DEST" PREFIX=/usr >/dev/null
for f in usr/sbin/vxswitchd usr/bin/vxctl; do
	[ -f "$DEST/$f" ] && [ -x "$DEST/$f" ] || fail "$f not installed executable"
done
for f in usr/share/man/man8/vxswitchd.8 usr/share/man/man8/vxctl.8 \
	 usr/lib/systemd/system/vxswitchd.service usr/lib/sysusers.d/vxswitch.conf \
	 usr/share/doc/vxswitch/vxswitchd.conf.example; do
	[ -f "$DEST/$f" ] || fail "$f not installed"
	[ "$(stat -c %a "$DEST/$f")" = 644 ] || fail "$f mode $(stat -c %a "$DEST/$f")"
done
cmp -s "$DEST/usr/sbin/vxswitchd" "$BUILD/vxswitchd" || fail "installed vxswitchd is not the build's"
[ "$(find "$DEST" -type f | wc -l)" = 7 ] || fail "unexpected files: $(find "$DEST" -type f)"
UNIT=$DEST/usr/lib/systemd/system/vxswitchd.service
grep -q '^ExecStart=/usr/sbin/vxswitchd ' "$UNIT" || fail "ExecStart: $(grep ExecStart "$UNIT")"
grep -q '^ExecReload=/bin/kill -HUP \$MAINPID$' "$UNIT" || fail "no ExecReload"
! grep -q @ "$UNIT" || fail "template words left: $(grep @ "$UNIT")"
# The documented set, in the unit too.
for key in CapabilityBoundingSet AmbientCapabilities; do
	[ "$(sed -n "s/^$key=//p" "$UNIT")" = "CAP_NET_ADMIN CAP_SYS_ADMIN" ] || fail "$key"
done
# The example config: every line a command vxctl's parser takes (status 2:
# parsed, no daemon there; 1 would be a parse error).
n_lines=0
while read -r line; do
	case "$line" in ""|"#"*) continue ;; esac
	st=0; "$VXCTL" --socket "$RIG_DIR/none.sock" $line >/dev/null 2>&1 || st=$?
	[ "$st" = 2 ] || fail "example config line '$line' does not parse"
	n_lines=$((n_lines + 1))
done <"$DEST/usr/share/doc/vxswitch/vxswitchd.conf.example"
[ "$n_lines" -ge 3 ] || fail "example config has $n_lines commands"
pass "make install DESTDIR PREFIX=/usr: 7 files where they belong, unit ExecStart /usr/sbin/vxswitchd"

make --no-print-directory -s install BUILD="$BUILD" DESTDIR="$DEST2" >/dev/null
grep -q '^ExecStart=/usr/local/sbin/vxswitchd ' "$DEST2/usr/local/lib/systemd/system/vxswitchd.service" \
	|| fail "default PREFIX: unit does not point at /usr/local/sbin"
[ -x "$DEST2/usr/local/sbin/vxswitchd" ] && [ -x "$DEST2/usr/local/bin/vxctl" ] || fail "default PREFIX layout"
pass "default PREFIX /usr/local: unit points at /usr/local/sbin/vxswitchd"

# --- systemd-analyze verify with --root=DESTDIR ----------------------------
# --root looks up everything inside DESTDIR, the unit's binaries included
# (that is the check we want), but also the targets it depends on and
# /bin/kill of ExecReload, which an install does not hold: a private mount
# namespace lends the host's, where DESTDIR has nothing (lib/, bin/).  The
# unit's Documentation= pages are looked up by man(1) in DESTDIR's MANDIR.
verify() { # DESTDIR PREFIX
	unshare -m --propagation private sh -c '
		mkdir -p "$1/lib/systemd/system" "$1/bin"
		mount --bind /usr/lib/systemd/system "$1/lib/systemd/system"
		mount --bind /usr/bin "$1/bin"
		MANPATH="$1$2/share/man" systemd-analyze verify --root="$1" \
			"$1$2/lib/systemd/system/vxswitchd.service"' sh "$1" "$2"
}
verify "$DEST" /usr >"$RIG_DIR/verify" 2>&1 \
	|| { cat "$RIG_DIR/verify"; fail "systemd-analyze verify"; }
[ ! -s "$RIG_DIR/verify" ] || { cat "$RIG_DIR/verify"; fail "systemd-analyze verify said something"; }
verify "$DEST2" /usr/local >"$RIG_DIR/verify" 2>&1 \
	|| { cat "$RIG_DIR/verify"; fail "systemd-analyze verify (PREFIX /usr/local)"; }
chmod -x "$DEST/usr/sbin/vxswitchd"
if verify "$DEST" /usr >"$RIG_DIR/verify" 2>&1; then
	fail "verify passed with a non-executable DESTDIR/usr/sbin/vxswitchd"
fi
grep -q "/usr/sbin/vxswitchd is not executable" "$RIG_DIR/verify" || { cat "$RIG_DIR/verify"; fail "verify's complaint"; }
chmod +x "$DEST/usr/sbin/vxswitchd"
pass "systemd-analyze verify --root=DESTDIR passes (both prefixes); fails when the binary is not executable"

# --- man pages --------------------------------------------------------------
for page in vxswitchd vxctl; do
	src=$DEST/usr/share/man/man8/$page.8
	MANWIDTH=200 man -E ascii --warnings -l "$src" >"$RIG_DIR/$page.txt" 2>"$RIG_DIR/$page.err" \
		|| fail "man -l $page.8"
	[ ! -s "$RIG_DIR/$page.err" ] || { cat "$RIG_DIR/$page.err"; fail "man -l $page.8 warns"; }
	for sec in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" "SEE ALSO"; do
		grep -q "^$sec" "$RIG_DIR/$page.txt" || fail "$page.8: no section $sec"
	done
	# Every option of --help, long and short, is in the page.
	for opt in $("$BUILD/$page" --help | grep -oE -- '(^|[ {])--?[a-zA-Z][a-z-]*' | tr -d ' {' | sort -u); do
		grep -qF -- "$opt" "$RIG_DIR/$page.txt" || fail "$page.8 lacks $opt of --help"
	done
done
# vxctl: every command and knob of the grammar (the COMMAND block: FILTER's
# alternatives after it are tc's match keys and actions, not commands).
"$BUILD/vxctl" --help | sed -n '/^COMMAND :=/,/^KNOB VALUE :=/p' | sed -n 's/^ *\(COMMAND :=\||\) \([a-z][a-z -]*[a-z]\).*/\2/p' | sed 's/ [A-Z].*//' | sort -u >"$RIG_DIR/verbs"
[ "$(wc -l <"$RIG_DIR/verbs")" -ge 13 ] || fail "grammar extraction: $(cat "$RIG_DIR/verbs")"
while read -r verb; do
	grep -q -- "^ *$verb" "$RIG_DIR/vxctl.txt" || fail "vxctl.8 lacks the command '$verb'"
done <"$RIG_DIR/verbs"
for knob in gro gso tap-tso udp-gro udp-segment rx-csum gro-hold-us gro-max-size fdb-ageing fdb-max; do
	grep -qw -- "$knob" "$RIG_DIR/vxctl.txt" || fail "vxctl.8 lacks knob $knob"
done
for w in SIGHUP "show config" "CONFIGURATION FILE" CAP_NET_ADMIN CAP_SYS_ADMIN CAP_NET_RAW $KEPT; do
	grep -q -- "$w" "$RIG_DIR/vxswitchd.txt" || fail "vxswitchd.8 lacks $w"
done
pass "man -l renders vxswitchd.8 and vxctl.8 without warnings; every --help option and vxctl command is in them"

# --- options refused --------------------------------------------------------
st=0; "$BUILD/vxswitchd" --user no-such-user-vxt31 -s "$RIG_DIR/x.sock" 2>"$RIG_DIR/err" || st=$?
[ "$st" = 2 ] && grep -q "no such user" "$RIG_DIR/err" || fail "--user unknown: status $st $(cat "$RIG_DIR/err")"
st=0; setpriv --reuid=65534 --regid=65534 --clear-groups "$BUILD/vxswitchd" --user nobody \
	-s "$RIG_DIR/x.sock" 2>"$RIG_DIR/err" || st=$?
[ "$st" = 1 ] && grep -q "needs root" "$RIG_DIR/err" || fail "--user as non-root: status $st $(cat "$RIG_DIR/err")"
pass "--user: unknown user exits 2, non-root exits 1 saying it needs root"

# --- a daemon that drops to nobody -----------------------------------------
# The config must stay readable by nobody (SIGHUP) and the socket reachable
# by the group's members: the rig's directory is 0700.
chmod 0711 "$RIG_DIR"
rig_create 4
RIG_VXD_ARGS="--user nobody --group users" rig_vxswitchd 1
RIG_VXD_ARGS="--user nobody" rig_vxswitchd 2
for side in 1 2; do
	eval "pid=\$VXD_PID_$side"
	for i in $(seq 100); do
		grep -q "^Uid:	65534	65534	65534	65534$" "/proc/$pid/status" && break
		sleep 0.05
	done
	want_gid=65534; [ "$side" = 1 ] && want_gid=100
	ntask=0
	for t in /proc/"$pid"/task/*; do
		st=$t/status; ntask=$((ntask + 1))
		field() { sed -n "s/^$1:[[:space:]]*//p" "$st"; }
		[ "$(field Uid)" = "65534	65534	65534	65534" ] || fail "h$side task ${t##*/}: Uid $(field Uid)"
		[ "$(field Gid)" = "$want_gid	$want_gid	$want_gid	$want_gid" ] || fail "h$side task ${t##*/}: Gid $(field Gid)"
		[ -z "$(field Groups)" ] || fail "h$side: supplementary groups $(field Groups)"
		[ "$(field NoNewPrivs)" = 1 ] || fail "h$side task ${t##*/}: NoNewPrivs"
		[ "$(field CapBnd)" = $KEPT ] || fail "h$side task ${t##*/}: CapBnd $(field CapBnd)"
		[ "$(field CapInh)" = 0000000000000000 ] && [ "$(field CapAmb)" = 0000000000000000 ] \
			|| fail "h$side task ${t##*/}: CapInh/CapAmb"
		if [ "${t##*/}" = "$pid" ]; then
			eff=$(field CapEff)
			[ "$(capsh --decode="$eff" | cut -d= -f2)" = $KEPT_NAMES ] || fail "h$side CapEff $eff: $(capsh --decode="$eff")"
			[ "$(field CapPrm)" = $KEPT ] || fail "h$side CapPrm $(field CapPrm)"
		else
			[ "$(field CapEff)" = 0000000000000000 ] && [ "$(field CapPrm)" = 0000000000000000 ] \
				|| fail "h$side worker ${t##*/}: CapPrm $(field CapPrm) CapEff $(field CapEff)"
		fi
	done
	nworkers=$(vx_stat "$side" "d['workers']['n']")
	[ "$ntask" = $(( nworkers + 1 )) ] || fail "h$side: $ntask threads for $nworkers workers"
done
pass "--user nobody: every thread uid 65534, no groups, NoNewPrivs; control thread CapEff $KEPT = $KEPT_NAMES, the $nworkers workers none"

nvm1 ping -c 3 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping between the VMs"
gbps=$(rig_iperf 2 1) || fail "iperf3"
[ "$(rig_iperf_bytes)" -gt 10000000 ] || fail "iperf3 moved $(rig_iperf_bytes) bytes"
pass "as nobody: ping and iperf3 between the VMs ($gbps Gbit/s)"

# --- run-time changes that need the kept capabilities ----------------------
VM3=$P-vm3
rig_ns_add "$VM3"
vx 1 port add vnet9 type tap vni "$VNI" netns "$VM3" mtu 1450 || fail "port add tap in a namespace as nobody"
n "$VM3" ip link show vnet9 >/dev/null 2>&1 || fail "vnet9 not in $VM3"
vx 1 port del vnet9 || fail "port del vnet9"
for i in $(seq 50); do n "$VM3" ip link show vnet9 >/dev/null 2>&1 || break; sleep 0.05; done
! n "$VM3" ip link show vnet9 >/dev/null 2>&1 || fail "vnet9 still in $VM3 after port del"
vx 1 port add vx77 type vxlan vni 77 local "$(u_addr 1)" remote "$(u_addr 2)" dstport 4790 >/dev/null \
	|| fail "port add vxlan as nobody"
vx 1 port del vx77 || fail "port del vx77"
echo "set fdb-ageing 123" >>"$RIG_DIR/h1.conf"
kill -HUP "$VXD_PID_1"
for i in $(seq 50); do vx 1 show config | grep -q "^set fdb-ageing 123$" && break; sleep 0.05; done
vx 1 show config | grep -q "^set fdb-ageing 123$" || { cat "$RIG_DIR/h1.log"; fail "SIGHUP reload as nobody"; }
nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping after the run-time changes"
pass "as nobody: port add/del of a tap in $VM3, of a vxlan port, SIGHUP reload"

# --- the socket group -------------------------------------------------------
S1=$RIG_DIR/h1.sock; S2=$RIG_DIR/h2.sock
[ "$(stat -c '%a %U %G' "$S1")" = "660 root users" ] || fail "h1 socket: $(stat -c '%a %U %G' "$S1")"
[ "$(stat -c '%a %U' "$S2")" = "600 root" ] || fail "h2 socket (no --group): $(stat -c '%a %U' "$S2")"
as() { setpriv --reuid=1 "$@"; }          # uid 1 (daemon): neither root nor nobody
as --regid=1 --groups=100 "$VXCTL" --socket "$S1" version >/dev/null || fail "supplementary member of users refused"
as --regid=100 --clear-groups "$VXCTL" --socket "$S1" version >/dev/null || fail "primary member of users refused"
st=0; as --regid=1 --clear-groups "$VXCTL" --socket "$S1" version >/dev/null 2>&1 || st=$?
[ "$st" = 2 ] || fail "a non-member reached the 0660 socket (status $st)"
# Defence in depth: with the mode opened up, the daemon still refuses him.
before=$(vx_stat 1 'd["control"]["refused_cred"]')
chmod 0666 "$S1"
st=0; as --regid=1 --clear-groups "$VXCTL" --socket "$S1" version >/dev/null 2>&1 || st=$?
chmod 0660 "$S1"
[ "$st" = 2 ] || fail "a non-member was served through a 0666 socket (status $st)"
[ "$(vx_stat 1 'd["control"]["refused_cred"]')" = $((before + 1)) ] || fail "refused_cred not counted"
"$VXCTL" --socket "$S2" version >/dev/null || fail "root refused on h2"
pass "--group users: socket 0660 root:users, members served (primary or supplementary), others refused (mode, then SO_PEERCRED)"

# --- the unit's way: never root ---------------------------------------------
# vxswitchd.service starts it as User=/Group= with AmbientCapabilities= and
# CapabilityBoundingSet= the kept set, NoNewPrivileges, --group: setpriv does
# the same here (uid 1, group users; RIG_VXD_ENV's words precede the daemon
# on env's command line, so setpriv runs it).  The socket's directory is
# the user's, as RuntimeDirectory= makes it.
rig_vxswitchd_stop 1
chown 1 "$RIG_DIR"
RIG_VXD_ENV="setpriv --reuid=1 --regid=100 --clear-groups --inh-caps=-all,+net_admin,+sys_admin
	--ambient-caps=+net_admin,+sys_admin --bounding-set=-all,+net_admin,+sys_admin --no-new-privs" \
	RIG_VXD_ARGS="--group users" rig_vxswitchd 1 || fail "vxswitchd as the unit runs it did not start"
st=/proc/$VXD_PID_1/status
[ "$(sed -n 's/^Uid:[[:space:]]*//p' "$st")" = "1	1	1	1" ] || fail "unit-style: Uid"
[ "$(sed -n 's/^CapEff:[[:space:]]*//p' "$st")" = $KEPT ] || fail "unit-style: CapEff"
# The rig saw the VM's port made, which the config does after the control
# server listens: the socket's group and mode are final already (set
# before listen(), ctl_server.h), as a member who connects first needs.
mode=$(stat -c '%a %G' "$S1")
[ "$mode" = "660 users" ] || fail "unit-style socket: $mode"
nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "unit-style: ping"
vx 1 port add vnet9 type tap vni "$VNI" netns "$VM3" mtu 1450 || fail "unit-style: port add tap"
n "$VM3" ip link show vnet9 >/dev/null 2>&1 || fail "unit-style: vnet9 not in $VM3"
vx 1 port del vnet9 || fail "unit-style: port del"
as --regid=1 --groups=100 "$VXCTL" --socket "$S1" version >/dev/null || fail "unit-style: group member refused"
pass "as the unit runs it (uid 1, ambient $KEPT_NAMES, --group users): starts, forwards, adds and removes a tap"

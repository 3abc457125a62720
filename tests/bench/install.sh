#!/usr/bin/env bash
# Install what `make bench` needs and the machine lacks: the peers (Debian knot, nsd,
# gdnsd), valgrind for instruction counts, taskset (util-linux), dnssec-signzone (bind9-utils)
# for the signed zone, kxdpgun (knot-dnsutils) and ip (iproute2) for the AF_XDP part. Needs
# root for apt.
set -euo pipefail
missing=()
for tool in knotd:knot nsd:nsd gdnsd:gdnsd valgrind:valgrind taskset:util-linux cc:gcc \
	dnssec-signzone:bind9-utils kxdpgun:knot-dnsutils ip:iproute2; do
	command -v "${tool%%:*}" >/dev/null || [ -x "/usr/sbin/${tool%%:*}" ] || missing+=("${tool#*:}")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "make bench: please install ${missing[*]} (Debian packages)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# The packages start their services on port 53; the benchmark runs its own copies.
for service in knot nsd gdnsd; do
	systemctl stop "$service" 2>/dev/null || service "$service" stop 2>/dev/null || true
done

#!/bin/sh
# Installs the Debian packages the tests need besides Apertium (see install-apertium.sh):
#
#   redis-server   redisstore's tests start their own redis-server on a free loopback port,
#                  and a 3-master Redis Cluster with redis-cli --cluster create (redis-cli
#                  comes with redis-tools, a dependency of redis-server)
#   prometheus     for promtool, which checks and unit-tests the alerting rules in ops/
#
# Run as root on Debian or Ubuntu. Idempotent: when every package is installed it changes
# nothing. Both packages would enable and start a system service (redis on 6379, prometheus
# on 9090 on every interface); the tests need neither, so the install runs under a
# policy-rc.d that forbids starting services, and the services are left disabled.
set -eu

PACKAGES="redis-server prometheus"

missing=""
for p in $PACKAGES; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done

if [ -n "$missing" ]; then
	export DEBIAN_FRONTEND=noninteractive
	policy=/usr/sbin/policy-rc.d
	if [ ! -e "$policy" ]; then
		printf '#!/bin/sh\nexit 101\n' >"$policy"
		chmod 755 "$policy"
		trap 'rm -f "$policy"' EXIT
	fi
	apt-get update -q
	# shellcheck disable=SC2086 # one word per package
	apt-get install -y -q --no-install-recommends $missing
	if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
		systemctl disable --now redis-server.service prometheus.service >/dev/null 2>&1 || true
	fi
fi

for cmd in redis-server redis-cli promtool; do
	if ! command -v "$cmd" >/dev/null 2>&1; then
		echo "install-tools: $cmd is not on PATH" >&2
		exit 1
	fi
done
echo "install-tools: $(redis-server --version | cut -d' ' -f1-3); $(promtool --version 2>&1 | head -1)"

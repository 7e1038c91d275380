#!/usr/bin/env bash
# ddp_two_namespaces_test.sh TEST_DISTRIBUTED: two machines, simulated. Two network namespaces
# joined by a veth pair (198.18.0.1 and 198.18.0.2, the benchmarking range 198.18.0.0/15, only
# inside the namespaces made here) each run one rank of the distributed tests: mpirun in the
# first launches the second "node" through tests/scripts/netns_agent.sh instead of ssh, and the
# ranks talk over TCP only (btl self,tcp). Namespaces and links are removed on exit. Exits 77
# (ctest: skipped) with the reason when the machine refuses to create them.
set -u
exe=$1
here=$(cd "$(dirname "$0")" && pwd)
id=$$
a=wick-dist-a$id b=wick-dist-b$id
work=$(mktemp -d)
cleanup() {
  ip netns del "$a" 2>/dev/null
  ip netns del "$b" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
skip() { echo "SKIPPED: $*"; exit 77; }
command -v ip >/dev/null || skip "no ip command (iproute2)"
err=$(ip netns add "$a" 2>&1) || skip "cannot create a network namespace: $err"
err=$( { ip netns add "$b" && ip link add wda$id type veth peer name wdb$id &&
         ip link set wda$id netns "$a" && ip link set wdb$id netns "$b" &&
         ip -n "$a" addr add 198.18.0.1/24 dev wda$id && ip -n "$b" addr add 198.18.0.2/24 dev wdb$id &&
         ip -n "$a" link set wda$id up && ip -n "$b" link set wdb$id up &&
         ip -n "$a" link set lo up && ip -n "$b" link set lo up; } 2>&1) || skip "cannot set up the veth pair: $err"
printf '198.18.0.1 slots=1\n198.18.0.2 slots=1\n' > "$work/hosts"
export WICK_NETNS_REMOTE=$b WICK_NETNS_MARK=$work/launched
ip netns exec "$a" mpirun --allow-run-as-root --hostfile "$work/hosts" -np 2 \
  --mca plm_rsh_agent "$here/netns_agent.sh" -x WICK_NETNS_REMOTE -x WICK_NETNS_MARK \
  --mca btl self,tcp --mca btl_tcp_if_include 198.18.0.0/24 --mca oob_tcp_if_include 198.18.0.0/24 \
  "$exe" "[mpi]"
rc=$?
[ "$rc" -eq 0 ] || { echo "FAIL: the two-namespace job exited $rc"; exit 1; }
[ -s "$work/launched" ] || { echo "FAIL: the second rank was not launched in the second namespace"; exit 1; }
echo "PASS: 2 ranks in namespaces $a and $b over TCP (198.18.0.1 <-> 198.18.0.2)"

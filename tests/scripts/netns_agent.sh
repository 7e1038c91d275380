#!/bin/sh
# mpirun's launch agent (in place of ssh) for ddp_two_namespaces_test.sh: "agent HOST CMD..."
# runs CMD in the network namespace WICK_NETNS_REMOTE, the simulated second machine, and
# records that it did so in WICK_NETNS_MARK.
shift
[ -n "${WICK_NETNS_MARK:-}" ] && echo launched >> "$WICK_NETNS_MARK"
exec ip netns exec "$WICK_NETNS_REMOTE" sh -c "$*"

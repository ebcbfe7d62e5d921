"""The parts of ``topogen emulate`` (:mod:`topogen.config.emulate` runs them in order).

* :mod:`.lab` - the routers, GPU NICs and cables read from a build; the plan's BGP against each file
* :mod:`.machine` - what this machine must offer: root, iproute2, FRR, memory
* :mod:`.resources` - namespaces, daemons and files a run makes, recorded and removed
* :mod:`.wiring` - namespaces and veth pairs, one per cable
* :mod:`.daemons` - the FRR daemons each file needs (zebra, bgpd, bfdd, staticd) started, their state read over the vty sockets
* :mod:`.ecmp` - the ECMP widths BGP should give every router of every tier
* :mod:`.checks` - sessions, reachability, rails and planes apart, ECMP
* :mod:`.blame` - the switch whose configuration causes each finding
* :mod:`.icmp` - ICMP echo from inside the namespaces
* :mod:`.flap` - one leaf uplink down and back up
* :mod:`.report` - what a run found
"""

"""Phase 2, the fabric: explicit, port-level wiring of the two architectures, and views of it.

* :mod:`.model` - the fabric model: switches and cables stored column-wise (numpy)
* :mod:`.clos` - the generators: rail-optimized and rail-only Clos, planes, dual homing, SUs
* :mod:`.naming` - deterministic device and port names
* :mod:`.breakout` - breakout cables: one switch cage fanned out to several slower links
* :mod:`.director` - a switch of more than 254 ports as an InfiniBand fabric shows it (ASICs)
* :mod:`.view` - the named view that every exporter reads, chunk by chunk
* :mod:`.graph` - the fabric as a networkx graph (``to_networkx``), one attribute schema
"""

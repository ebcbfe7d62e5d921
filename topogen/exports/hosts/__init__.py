"""Hosts: the compute nodes' own network files, for whoever provisions the servers.

* :mod:`.netplan` - each node's netplan YAML (NICs, in-band bond) and NCCL variables.
"""

"""Slurm: the files an HPC admin copies next to ``slurm.conf`` for slurmctld.

* :mod:`.topology` - the ``slurm`` exporter: ``topology.conf`` for the tree and block plugins, and
  ``nodes.conf`` for the nodes on the in-band network.
"""

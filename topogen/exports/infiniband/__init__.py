"""InfiniBand: the fabric as ``ibnetdiscover`` sees it and the files OpenSM (the subnet manager) reads.

* :mod:`.ibnetdiscover` - ``<arch>/ibnetdiscover/<subnet>.topo`` per compute subnet;
* :mod:`.storage` - the ``ibnetdiscover`` exporter: the compute subnets, then an InfiniBand storage
  fabric's ``storage.topo`` and OpenSM files;
* :mod:`.opensm_files` - partitions, ftree roots and compute nodes of each subnet;
* :mod:`.opensm` - the ``opensm`` exporter: :mod:`.opensm_files` written per subnet;
* :mod:`.opensm_routes` - forwarding tables from the export simulated by ``ibsim`` and routed by ``opensm``.
"""

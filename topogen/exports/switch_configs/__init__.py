"""Switch configurations: the day-0 files a network engineer loads onto each switch, and the address plan they share.

* :mod:`.addressing` - ``<arch>/addressing.csv``, every interface's address and peer;
* :mod:`.frr` - FRR's integrated configuration per switch;
* :mod:`.sonic` - SONiC's ``config_db.json`` per switch;
* :mod:`.nvue` - Cumulus NVUE's ``startup.yaml`` per switch;
* :mod:`.switch_files` - the one-file-per-switch writer SONiC and NVUE share;
* :mod:`.air` - the fabric as an NVIDIA Air topology.
"""

"""Installers: the cable lists the people on the data-centre floor work from.

* :mod:`.cabling` - ``<arch>/cabling.csv``, one row per cable of the compute fabric;
* :mod:`.pullsheets` - the compute fabric's cables to pull, by rack pair;
* :mod:`.network_cabling` - the storage, in-band and OOB networks' cables;
* :mod:`.network_pullsheets` - those networks' cables to pull, by rack pair;
* :mod:`.network_addresses` - every in-band and OOB address of the plan.
"""
